/**
 * vitest's `update` option for this project's configs. vitest writes a snapshot that does not exist yet ("new")
 * unless it believes it runs in CI (std-env's guess from the CI host's variables); a CI host it does not recognise, or
 * a runner that clears the environment, would then pass a test by writing its expected value. With `CI` set (as
 * `.ci/run` sets it) a missing snapshot fails instead; `-u` on the command line still updates on purpose.
 */
export function snapshotUpdate(env: Readonly<Record<string, string | undefined>>): 'none' | undefined {
  const ci = env.CI?.trim().toLowerCase();
  return ci === undefined || ci === '' || ci === '0' || ci === 'false' ? undefined : 'none';
}
