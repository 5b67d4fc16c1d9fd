"""The wizard's pages, in the order the admin meets them."""
