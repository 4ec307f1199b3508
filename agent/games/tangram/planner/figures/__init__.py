"""The figure library: one YAML file per figure (a package only so that installs ship the files)."""
