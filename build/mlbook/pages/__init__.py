"""Pages the plugin writes itself, with no file in book/: the Downloads page and the Scripts appendix."""
