import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ROOT_DIR = Path.resolve(import.meta.dirname, '..', '..');
const RUNNER = Path.join(ROOT_DIR, 'scripts', 'test.ts');

/**
 * A project of its own for the runner: src/used.ts is tested, src/child.ts runs only in a process the test starts,
 * src/unused.ts is loaded by nothing, so its lines count as uncovered.
 */
const PROJECT_FILES: Record<string, string> = {
    'src/used.ts': [
        'export function add(a: number, b: number): number {',
        '    return a + b;',
        '}',
        '',
        'export function neverCalled(text: string): string {',
        '    const upper = text.toUpperCase();',
        '    return upper;',
        '}',
        '',
    ].join('\n'),
    'src/child.ts': ["import { add } from './used.ts';", '', 'console.log(`child says ${add(2, 3)}`);', ''].join('\n'),
    'src/unused.ts': ['export function unused(): number {', '    return 1;', '}', ''].join('\n'),
    'test/used.test.ts': [
        "import { spawnSync } from 'node:child_process';",
        "import Code from '@hapi/code';",
        "import * as Lab from '@hapi/lab';",
        "import { add } from '../src/used.ts';",
        '',
        'export const lab = Lab.script();',
        '',
        "lab.it('adds, here and in a child process', () => {",
        '    Code.expect(add(1, 2)).to.equal(3);',
        "    const child = spawnSync(process.execPath, ['--import', 'tsx', 'src/child.ts'], { encoding: 'utf8' });",
        "    Code.expect(child.stdout).to.equal('child says 5\\n');",
        '});',
        '',
    ].join('\n'),
};

let projectDir = '';

function writeProject(threshold: number): void {
    const c8 = { all: true, include: ['src/**'], extension: ['.ts'], reporter: ['lcov', 'json-summary'], lines: threshold };
    Fs.writeFileSync(Path.join(projectDir, 'package.json'), JSON.stringify({ type: 'module', c8 }));
}

/**
 * The environment without what would change the runner's behaviour. NODE_V8_COVERAGE, set when this suite runs with
 * coverage, reaches every child process unless the environment given names it, so it is named, unset.
 */
function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
    const { CI: _ci, COVERAGE: _coverage, npm_config_coverage: _npm, ...rest } = process.env;
    return { ...rest, NODE_V8_COVERAGE: undefined, ...extra };
}

function runner(args: string[], extra: Record<string, string> = {}) {
    const result = spawnSync(process.execPath, ['--import', 'tsx', RUNNER, ...args], {
        cwd: projectDir,
        env: environment(extra),
        encoding: 'utf8',
        timeout: 120_000,
    });
    const output = `${result.stdout}${result.stderr}`;
    const lines = result.stdout.trim().split('\n');
    return { status: result.status, output, lines, closing: lines[lines.length - 1] };
}

/** Lines found (LF) and hit (LH) per source file in coverage/lcov.info, by path relative to the project. */
function lcovTotals(): Record<string, { found: number; hit: number }> {
    const totals: Record<string, { found: number; hit: number }> = {};
    const lcov = Fs.readFileSync(Path.join(projectDir, 'coverage', 'lcov.info'), 'utf8');
    for (const record of lcov.split('end_of_record').filter((text) => text.trim() !== '')) {
        const file = /^SF:(.*)$/m.exec(record)?.[1] ?? '';
        totals[Path.relative(projectDir, Path.resolve(projectDir, file))] = {
            found: Number(/^LF:(\d+)$/m.exec(record)?.[1]),
            hit: Number(/^LH:(\d+)$/m.exec(record)?.[1]),
        };
    }

    return totals;
}

describe('scripts/test.ts with coverage', () => {
    before(() => {
        projectDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-coverage-project-'));
        for (const [file, text] of Object.entries(PROJECT_FILES)) {
            Fs.mkdirSync(Path.dirname(Path.join(projectDir, file)), { recursive: true });
            Fs.writeFileSync(Path.join(projectDir, file), text);
        }

        Fs.symlinkSync(Path.join(ROOT_DIR, 'node_modules'), Path.join(projectDir, 'node_modules'));
    });

    after(() => {
        Fs.rmSync(projectDir, { recursive: true, force: true });
    });

    it('reports the sources, child processes included, with the summary before the closing line', () => {
        writeProject(100);
        const result = runner(['--coverage', 'test/used.test.ts']);
        expect(result.closing, result.output).to.equal('Tests: 1 passed, 0 failed, 0 skipped');
        expect(result.status, result.output).to.equal(0);
        const summary = result.lines.findIndex((line) => /^Coverage: [\d.]+% of lines \(\d+\/\d+\), [\d.]+% of branches/.test(line));
        expect(summary, result.output).to.be.above(-1);
        expect(result.lines.slice(summary + 1, -1)).to.equal([
            'Coverage: the threshold of 100% of lines (c8.lines in package.json) is checked on runs of the whole suite only.',
        ]);

        const totals = lcovTotals();
        expect(Object.keys(totals).sort()).to.equal(['src/child.ts', 'src/unused.ts', 'src/used.ts']);
        expect(totals['src/child.ts']?.hit, 'lines run only in the child process').to.equal(totals['src/child.ts']?.found);
        expect(totals['src/unused.ts']?.hit).to.equal(0);
        const used = totals['src/used.ts'] ?? { found: 0, hit: 0 };
        expect(used.hit).to.be.above(0);
        expect(used.hit, 'neverCalled() is not covered').to.be.below(used.found);
        expect(Fs.existsSync(Path.join(projectDir, 'coverage', 'lcov-report', 'index.html'))).to.be.true();
        expect(Fs.existsSync(Path.join(projectDir, 'coverage', 'tmp')), 'raw V8 files are removed').to.be.false();
    });

    it('fails a whole-suite run under the threshold, and passes one that meets it', () => {
        writeProject(100);
        const under = runner([], { COVERAGE: '1' });
        expect(under.status, under.output).to.equal(1);
        expect(under.output).to.match(
            /Coverage: [\d.]+% of lines is under the threshold of 100% of lines \(c8\.lines in package\.json\)\./,
        );
        expect(under.closing).to.equal('Tests: 1 passed, 0 failed, 0 skipped');

        writeProject(10);
        const met = runner([], { COVERAGE: '1' });
        expect(met.status, met.output).to.equal(0);
        expect(met.output).to.match(/Coverage: [\d.]+% of lines meets the threshold of 10% of lines/);
        expect(met.closing).to.equal('Tests: 1 passed, 0 failed, 0 skipped');
    });

    it('keeps a failing test failing, and leaves coverage off unless asked', () => {
        writeProject(10);
        Fs.writeFileSync(
            Path.join(projectDir, 'test', 'failing.test.ts'),
            "import * as Lab from '@hapi/lab';\nexport const lab = Lab.script();\nlab.it('fails', () => { throw new Error('on purpose'); });\n",
        );
        try {
            const failed = runner([], { COVERAGE: '1' });
            expect(failed.status, failed.output).to.equal(1);
            expect(failed.closing).to.equal('Tests: 1 passed, 1 failed, 0 skipped');

            Fs.rmSync(Path.join(projectDir, 'coverage'), { recursive: true, force: true });
            const plain = runner(['test/used.test.ts'], { COVERAGE: '0' });
            expect(plain.closing, plain.output).to.equal('Tests: 1 passed, 0 failed, 0 skipped');
            expect(plain.output).to.not.contain('Coverage:');
            expect(Fs.existsSync(Path.join(projectDir, 'coverage'))).to.be.false();
        } finally {
            Fs.rmSync(Path.join(projectDir, 'test', 'failing.test.ts'), { force: true });
        }
    });
});
