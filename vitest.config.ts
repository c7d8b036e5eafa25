import { defineConfig } from 'vitest/config';
import { snapshotUpdate } from './test/support/snapshot-policy.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    update: snapshotUpdate(process.env),
  },
});
