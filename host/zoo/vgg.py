"""torchvision ``vgg16_bn`` (configuration "D" with batch normalization), trained with
cross-entropy on 1000 classes."""

from .builder import GraphBuilder


__all__ = ["build_vgg16_bn"]

IMAGE_SIZE = 224
NUM_CLASSES = 1000
# output channels of each 3x3 convolution; "M" is a 2x2 max-pool
CONFIG_D = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
            512, 512, 512, "M")


def build_vgg16_bn(*, batch, dtype="fp32", optimizer="sgd_momentum"):
    b = GraphBuilder("vgg16_bn", batch=batch, dtype=dtype, optimizer=optimizer,
                     meta={"image_size": IMAGE_SIZE})
    y = b.input("images", (batch, 3, IMAGE_SIZE, IMAGE_SIZE))
    labels = b.input("labels", (batch,), "int64")
    index = 0   # torchvision's index in ``features``
    for item in CONFIG_D:
        if item == "M":
            y = b.maxpool(f"features.{index}", y, 2, 2, 0)
            index += 1
            continue
        y = b.conv2d(f"features.{index}", y, item, 3, padding=1, bias=True)
        y = b.batchnorm(f"features.{index + 1}", y)
        y = b.relu(f"features.{index + 2}", y)
        index += 3
    y = b.adaptive_avgpool("avgpool", y, 7, 7)
    y = b.linear("classifier.0", y, 4096, flatten=True)
    y = b.dropout("classifier.2", b.relu("classifier.1", y))
    y = b.linear("classifier.3", y, 4096)
    y = b.dropout("classifier.5", b.relu("classifier.4", y))
    logits = b.linear("classifier.6", y, NUM_CLASSES)
    loss = b.cross_entropy("loss", logits, labels)
    return b.finish(loss, {"logits": logits})
