// `prepack` / `postpack`: the packed package.json carries no install-time script. `prepare`
// builds a git install from its sources (npm runs it in the clone, where scripts/ exists); in the
// tarball it would name a scripts/ folder that is not shipped, and npm 11 lists it among the
// install scripts to approve for a file: or git dependency. `strip` sets the original aside and
// writes package.json without those scripts for the tarball; `restore` puts the original back.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const manifest = fileURLToPath(new URL('../package.json', import.meta.url));
const original = fileURLToPath(new URL('../.package.json.prepack', import.meta.url));
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'preprepare', 'prepare', 'postprepare'];

const [command] = process.argv.slice(2);
// A pack that failed before its postpack left the original aside: it is the one to keep.
if (existsSync(original)) renameSync(original, manifest);
if (command === 'strip') {
  const text = readFileSync(manifest, 'utf8');
  const json = JSON.parse(text);
  for (const script of INSTALL_SCRIPTS) delete json.scripts?.[script];
  writeFileSync(original, text);
  writeFileSync(manifest, `${JSON.stringify(json, null, 2)}\n`);
} else if (command !== 'restore') {
  console.error('usage: node scripts/pack-manifest.mjs strip|restore');
  process.exit(2);
}
