// Loads the napi-rs addon once. The addon is CommonJS (generated loader), the server is ESM.
import { createRequire } from 'node:module';

type Addon = typeof import('../../addon/index.js');

const require = createRequire(import.meta.url);

let loaded: Addon | undefined;

/** The native engine binding; throws a readable error when `npm run build:native` has not run. */
export function native(): Addon {
  if (!loaded) {
    try {
      loaded = require('../../addon/index.js') as Addon;
    } catch (err) {
      throw new Error(
        `The native engine is not built (${(err as Error).message.split('\n')[0]}). Run \`npm run build:native\`.`,
      );
    }
  }
  return loaded;
}
