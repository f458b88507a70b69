import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkg = require('../../package.json') as { version: string };

/** The server's version (package.json). */
export const SERVER_VERSION: string = pkg.version;
