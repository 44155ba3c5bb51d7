/**
 * How a store is named in a command's output: by its provider, and where a provider has
 * more than one store (a host moved one with DELEGATE_<NAME>_STATE_DIR), by its folder
 * too, so two rows of the same name can be told apart.
 */
export function storeLabels<T extends { provider: string; state_dir: string }>(stores: readonly T[]): Map<T, string> {
  const count = new Map<string, number>();
  for (const s of stores) count.set(s.provider, (count.get(s.provider) ?? 0) + 1);
  return new Map(
    stores.map((s) => [s, (count.get(s.provider) ?? 0) > 1 ? `${s.provider} (${s.state_dir})` : s.provider]),
  );
}
