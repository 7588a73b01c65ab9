/** Adds two integers and returns their sum. */
static int add_numbers(int a, int b) { return a + b; }

int main(void) { return add_numbers(1, 2) - 3; }
