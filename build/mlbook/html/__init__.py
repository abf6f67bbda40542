"""The built pages as HTML: article loading, link resolution, print preparation, code wrapping and colours."""
