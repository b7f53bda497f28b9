"""Built-in zagent plugins. Each is registered through the ``zagent`` entry-point group
exactly as a third party's plugin would be; the kernel never imports this package."""
