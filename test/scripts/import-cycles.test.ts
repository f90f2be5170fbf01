import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { cycleProblems, importCycles } from '../../scripts/import-cycles.ts';
import { ROOT_DIR } from '../../server.ts';
import { temporaryDirectory } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function tree(files: Record<string, string>): string {
    const root = temporaryDirectory('gatehouse-cycles-');
    for (const [path, text] of Object.entries(files)) {
        Fs.mkdirSync(Path.dirname(Path.join(root, path)), { recursive: true });
        Fs.writeFileSync(Path.join(root, path), text);
    }

    return root;
}

describe('the import-cycle check run by npm run lint', () => {
    it('finds a cycle between top-level parts and one between concept folders, and none in a one-way tree', () => {
        const root = tree({
            'lib/one.ts': "import { two } from '../plugins/sso/two.ts';\nexport const one = two;\n",
            'plugins/sso/two.ts': "import { three } from '../../lib/three.ts';\nexport const two = three;\n",
            'lib/three.ts': "export { one as three } from './one.ts';\n",
            'plugins/git/domain/alpha/a.ts': "import { b } from '../beta/b.ts';\nexport const a = b;\n",
            'plugins/git/domain/beta/b.ts': "import type { a } from '../alpha/a.ts';\nexport const b = 1 as unknown as typeof a;\n",
            'plugins/git/domain/gamma/c.ts': "import { a } from '../alpha/a.ts';\nexport const c = a;\n",
        });
        const found = importCycles(root);
        expect(found).to.equal([
            ['lib', 'plugins/sso'],
            ['plugins/git/domain/alpha', 'plugins/git/domain/beta'],
        ]);
        expect(cycleProblems(found, [])).to.equal([
            'an import cycle: lib -> plugins/sso (break it)',
            'an import cycle: plugins/git/domain/alpha -> plugins/git/domain/beta (break it)',
        ]);
        expect(
            cycleProblems(found, [
                ['plugins/sso', 'lib'],
                ['plugins/git/domain/beta', 'plugins/git/domain/alpha'],
            ]),
        ).to.equal([]);
        expect(cycleProblems(found, [...found, ['jobs', 'lib']])).to.equal(['no longer a cycle, take it out of KNOWN_CYCLES: jobs, lib']);
        expect(
            importCycles(tree({ 'lib/a.ts': "import { b } from './b.ts';\nexport const a = b;\n", 'lib/b.ts': 'export const b = 1;\n' })),
        ).to.equal([]);
    });

    it('holds for this tree: no cycle but the known ones, each still there', () => {
        expect(cycleProblems(importCycles(ROOT_DIR))).to.equal([]);
    });
});
