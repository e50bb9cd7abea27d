/**
 * What to tell a user whose http(s) URL flag got something else: `localhost:3001` parses as a URL
 * of scheme `localhost:`, so "got localhost:" alone puzzles. A value without `://` gets the fix
 * spelled out; its query and userinfo (where tokens live) are left out of the message.
 */
export function httpSchemeHint(value: string, protocol: string): string {
  if (value.includes('://')) return `got ${protocol}`;
  const shown = value.replace(/^[^/@]*@/, '').replace(/[?#].*$/s, '');
  return `got ${JSON.stringify(shown)} without a scheme: try http://${shown}`;
}
