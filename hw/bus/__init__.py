"""The register bus: its signature, the register-map description, the register file
generated from a description, and the field behaviours hardware attaches to fields."""
