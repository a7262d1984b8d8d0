import { EXTENDABLE_SCOPES, SCOPES, type Scope } from "../config";

/**
 * Parses a requested scope string (space or comma separated) into the granted list:
 * known scopes and their extended `<scope>:<type>` forms; `basic` is always included.
 * Returns the unknown names separately so the caller can refuse them.
 */
export function parseScopes(input: string | undefined): { scopes: string[]; unknown: string[] } {
  const out = new Set<string>(["basic"]);
  const unknown: string[] = [];
  for (const s of (input ?? "").split(/[\s,]+/).filter(Boolean)) {
    const [base, type] = splitScope(s);
    if (!(SCOPES as readonly string[]).includes(base) || (type !== undefined && (!EXTENDABLE_SCOPES.includes(base as Scope) || !type))) {
      unknown.push(s);
    } else out.add(s);
  }
  return { scopes: [...out], unknown };
}

const splitScope = (s: string): [string, string | undefined] => {
  const i = s.indexOf(":");
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
};

/**
 * Whether granted scopes allow `scope`, optionally for one object type: `messages` allows
 * every type, `messages:io.example.core.pm` only that one. Without a type, any form counts.
 */
export function hasScope(granted: readonly string[], scope: Scope, type?: string): boolean {
  return granted.some((g) => {
    const [base, t] = splitScope(g);
    if (base !== scope) return false;
    return t === undefined || type === undefined || t === type;
  });
}
