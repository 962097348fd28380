// Vitest configuration: tests live in test/; process-level tests spawn the compiled CLI in dist/,
// which `npm test` builds first.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
