"""ForgeHeadless: the HTTP agent Forge (the open-source Magic: The Gathering engine) asks for decisions."""
