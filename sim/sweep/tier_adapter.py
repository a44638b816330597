"""The one place the ``tier`` point function meets the tier model's API.

A sweep configuration (the ``tier`` point function's parameters) goes in, the run's
metrics come out as a dict. When the tier model's entry point changes, only this function
follows it.
"""

from matndp.host.tier.run import run_model


__all__ = ["tier_metrics"]


def tier_metrics(config):
    size = ({"hbm_fraction": config["hbm_fraction"]} if config["hbm_gb"] is None
            else {"hbm_bytes": int(config["hbm_gb"] * 1e9)})
    run = run_model(config["model"], policy=config["policy"], gpu=config["gpu"],
                    batch=config["batch"], flash=config["flash"],
                    flash_devices=config["flash_devices"], link_gbs=config["link_gbs"],
                    dtype=config["dtype"], seq_len=config["seq_len"],
                    iterations=config["iterations"], **size)
    return dict(run.metrics)
