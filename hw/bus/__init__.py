"""The register bus: its signature, the register-map description, the register file
generated from a description, the field behaviours hardware attaches to fields, and the
decoder that routes the bus between the register file and the map's windows."""
