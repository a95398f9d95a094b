from shop.cart import apply_discount, line_total, subtotal, total

ITEMS = [{"price": 20.0, "quantity": 2}, {"price": 5.5, "quantity": 4}]


def test_line_total():
    assert line_total(20.0, 2) == 40.0


def test_subtotal():
    assert subtotal(ITEMS) == 62.0


def test_total_without_discount():
    assert total(ITEMS) == 62.0


def test_ten_percent_discount():
    assert apply_discount(100.0, 10) == 90.0


def test_total_with_discount():
    assert total(ITEMS, percent=50) == 31.0
