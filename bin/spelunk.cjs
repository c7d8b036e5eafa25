#!/usr/bin/env node
// The command npm links: runs the built launcher (dist/spelunk.js), or, in a clone installed without its build
// (`npm ci --ignore-scripts`, `npm i -g . --ignore-scripts`: npm then links the command to a folder with no dist/),
// says how to finish the install instead of failing with a missing module.
'use strict';
const { existsSync } = require('node:fs');
const path = require('node:path');

const root = path.dirname(__dirname);
const launcher = path.join(root, 'dist', 'spelunk.js');
if (existsSync(launcher)) {
  require(launcher);
} else {
  process.stderr.write(
    `spelunk: ${root} is not built (no dist/): it was installed with its scripts skipped (--ignore-scripts). ` +
      `Finish the install with: cd ${JSON.stringify(root)} && npm run prepare  ` +
      '(a global install of a clone is a link to the clone, so this fixes it too)\n',
  );
  process.exitCode = 1;
}
