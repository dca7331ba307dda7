// Every grammar that package.json contributes must exist in syntaxes/ (copied from
// ../grammars by build.sh), and every copied grammar must be contributed.
import fs from 'fs';
import path from 'path';

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const contributed = (pkg.contributes.grammars ?? []).map((g) => path.normalize(g.path));
let bad = 0;
for (const p of contributed) {
  if (!fs.existsSync(p)) {
    console.error(`check-grammars: package.json contributes ${p}, which is missing`);
    bad++;
  } else {
    JSON.parse(fs.readFileSync(p, 'utf8')); // must be valid JSON
  }
}
for (const f of fs.readdirSync('syntaxes')) {
  const p = path.normalize(path.join('syntaxes', f));
  if (!contributed.includes(p)) {
    console.error(`check-grammars: ${p} is not in package.json contributes.grammars`);
    bad++;
  }
}
if (bad) {
  process.exit(1);
}
console.log(`   ${contributed.length} grammar(s) contributed`);
