/** A SQL identifier, double-quoted; refuses anything but letters, digits and underscores. */
export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/i.test(name)) throw new Error(`unsafe identifier ${name}`);
  return `"${name}"`;
}
