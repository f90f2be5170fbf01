import { spawnSync } from 'node:child_process';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const ROOT_DIR = Path.resolve(import.meta.dirname, '..', '..');
const FIXTURE = Path.join('test', 'fixtures', 'runner', 'passing-and-skipped.ts');

/** The environment without what would change the runner's behaviour: CI, and options npm passed on. */
function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const { CI: _ci, npm_config_grep: _grep, npm_config_timeout: _timeout, ...rest } = process.env;
    return { ...rest, ...extra };
}

function run(command: string, args: string[], extra: Record<string, string> = {}) {
    const result = spawnSync(command, args, { cwd: ROOT_DIR, env: environment(extra), encoding: 'utf8', timeout: 60_000 });
    const output = `${result.stdout}${result.stderr}`;
    const lines = result.stdout.trim().split('\n');
    return { status: result.status, output, closing: lines[lines.length - 1] };
}

function runner(args: string[], extra: Record<string, string> = {}) {
    return run(process.execPath, ['--import', 'tsx', Path.join('scripts', 'test.ts'), ...args], extra);
}

describe('scripts/test.ts', () => {
    it('counts a skipped test as skipped, not passed', () => {
        const result = runner([FIXTURE]);
        expect(result.closing, result.output).to.equal('Tests: 1 passed, 0 failed, 1 skipped');
        expect(result.status, result.output).to.equal(0);
    });

    it('fails a run that skipped a test under CI=true, naming the test', () => {
        const result = runner([FIXTURE], { CI: 'true' });
        expect(result.status, result.output).to.equal(1);
        expect(result.output).to.contain('  - fixture is skipped on purpose');
        expect(result.closing).to.equal('Tests: 1 passed, 0 failed, 1 skipped');
        expect(runner([FIXTURE], { CI: 'false' }).status).to.equal(0);
    });

    it('runs only the tests whose title contains the --grep text, brackets and all', () => {
        const result = runner(['--grep', '(one)', FIXTURE], { CI: 'true' });
        expect(result.closing, result.output).to.equal('Tests: 1 passed, 0 failed, 0 skipped');
        expect(result.status).to.equal(0);
        const none = runner([FIXTURE, '--grep=no such title']);
        expect(none.output).to.contain('No test title contains "no such title".');
        expect(none.closing).to.equal('Tests: 0 passed, 0 failed, 0 skipped');
        expect(none.status).to.equal(1);
    });

    it('takes files and --grep after -- from npm test, and says so when npm kept --grep for itself', () => {
        const passed = run('npm', ['test', '--', '--grep', 'adds', FIXTURE]);
        expect(passed.closing, passed.output).to.equal('Tests: 1 passed, 0 failed, 0 skipped');
        expect(passed.status).to.equal(0);
        const swallowed = run('npm', ['test', FIXTURE, '--grep', 'adds']);
        expect(swallowed.status).to.equal(1);
        expect(swallowed.output).to.contain("npm took --grep for itself: put the runner's options after --");
    });

    it('names a test file that does not exist', () => {
        const result = runner(['test/no-such-file.test.ts']);
        expect(result.status).to.equal(1);
        expect(result.output).to.contain('no such test file or folder: test/no-such-file.test.ts');
    });
});
