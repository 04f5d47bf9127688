"""``python -m sdeformer`` runs the command line."""

from .cli import main

main()
