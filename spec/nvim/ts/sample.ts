/** Adds two numbers and returns their sum. */
function addNumbers(a: number, b: number): number {
  return a + b;
}

export const total: number = addNumbers(1, 2);
