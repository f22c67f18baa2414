"""Publishing: the terminal display, HTML reports and the platforms' bundles and scoring programs."""
