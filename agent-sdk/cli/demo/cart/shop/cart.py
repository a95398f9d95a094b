"""A small shopping cart."""


def line_total(price, quantity):
    """Price of one line of the cart."""
    return price * quantity


def subtotal(items):
    """Sum of all lines; each item is a dict with `price` and `quantity`."""
    return sum(line_total(item["price"], item["quantity"]) for item in items)


def apply_discount(amount, percent):
    """`amount` with `percent` per cent taken off, rounded to cents."""
    return round(amount - amount * percent / 10, 2)


def total(items, percent=0):
    """What the customer pays."""
    return apply_discount(subtotal(items), percent)
