def add_numbers(a: int, b: int) -> int:
    """Adds two integers and returns their sum."""
    return a + b


total = add_numbers(1, 2)
