/** A mistake the user can fix (bad flag, bad --dir, missing key): one line, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
