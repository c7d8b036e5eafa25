import pkg from '../package.json' with { type: 'json' };

/** spelunk's version, from package.json (inlined by the bundler). */
export const VERSION: string = pkg.version;
