import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { temporaryDirectory } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const ROOT_DIR = Path.resolve(import.meta.dirname, '..', '..');
const FIXTURE = Path.join('test', 'fixtures', 'runner', 'passing-and-skipped.ts');
const ESCAPING = Path.join('test', 'fixtures', 'runner', 'escaping-failures.ts');
const PARALLEL = ['first', 'second', 'docker-one', 'docker-two'].map((name) =>
    Path.join('test', 'fixtures', 'runner', 'parallel', `${name}.ts`),
);

/** The environment without what would change the runner's behaviour: CI, and options npm passed on. */
function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const {
        CI: _ci,
        npm_config_grep: _grep,
        npm_config_timeout: _timeout,
        GATEHOUSE_TEST_JOBS: _jobs,
        GATEHOUSE_TEST_DOCKER_JOBS: _dockerJobs,
        ...rest
    } = process.env;
    return { ...rest, GATEHOUSE_TEST_PREPARE: '0', ...extra };
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
    it('runs each test of a file alone with --each, and names the one that leans on another', () => {
        const leaning = Path.join('test', 'fixtures', 'runner', 'leaning.ts');
        const together = runner([leaning]);
        expect(together.closing, together.output).to.equal('Tests: 3 passed, 0 failed, 0 skipped');
        const alone = runner([leaning, '--each']);
        expect(alone.status, alone.output).to.equal(1);
        expect(alone.output).to.contain(`passes alone ${leaning} #1: fixture makes a thing`);
        expect(alone.output).to.contain(`FAILS ALONE  ${leaning} #2: fixture leans on the thing made before`);
        expect(alone.output).to.contain(`Failed alone:\n  - ${leaning}: fixture leans on the thing made before`);
        expect(alone.closing).to.equal('Tests: 2 passed, 1 failed, 0 skipped');
        expect(runner([leaning, '--id', '3']).closing).to.equal('Tests: 1 passed, 0 failed, 0 skipped');
    });

    it('shuffles the tests of each file with --shuffle and a seed, the same seed giving the same order', () => {
        const leaning = Path.join('test', 'fixtures', 'runner', 'leaning.ts');
        // With seed 1 the test that leans on another runs before it; with seed 2 after it.
        const reordered = runner([leaning, '--shuffle', '1']);
        expect(reordered.output).to.contain('Tests run in an order shuffled with seed 1: --shuffle 1 repeats it.');
        // The closing summary says why as well as what: a CI log may keep only its tail.
        expect(reordered.output).to.contain(
            `Failed:\n  - ${leaning}: fixture leans on the thing made before\n      Expected [] to equal specified value: [ 'thing' ]`,
        );
        expect(reordered.closing).to.equal('Tests: 2 passed, 1 failed, 0 skipped');
        expect(runner([leaning, '--shuffle', '1']).closing).to.equal(reordered.closing);
        expect(runner([leaning, '--shuffle', '2']).closing).to.equal('Tests: 3 passed, 0 failed, 0 skipped');
        const drawn = runner([leaning, '--shuffle']);
        expect(drawn.output).to.match(/shuffled with seed \d+: --shuffle \d+ repeats it/);
        expect(runner([leaning, '--shuffle', '--each']).output).to.contain('--shuffle orders whole files: not with --id or --each');
    });

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

    it('names every file as it runs, and each failure with its file and title, even one that threw no Error', () => {
        const result = runner([ESCAPING, FIXTURE]);
        expect(result.output).to.contain(`▶ ${ESCAPING}`);
        expect(result.output).to.contain(`▶ ${FIXTURE}`);
        expect(result.output).to.not.contain('TypeError');
        expect(result.output).to.contain(`  - ${ESCAPING}: a hook that throws no Error needs the hook`);
        expect(result.output).to.contain(`  - ${ESCAPING}: a test that rejects with an object rejects plainly`);
        expect(result.output).to.contain('the test failed without a stack');
        // A long message keeps its start and its end, where the assertion says what it expected.
        const long = result.output.split(`  - ${ESCAPING}: an assertion with a long message of its caller says why at the end\n`)[1];
        expect(String(long).split('\n')[0]).to.match(
            /^ {6}the run's start \| line 0 of the run .* … .* the run's last line: Expected 'failed' to equal specified value: 'succeeded'$/,
        );
        expect(result.closing, result.output).to.equal('Tests: 2 passed, 4 failed, 1 skipped');
        expect(result.status).to.equal(1);
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

    it('runs files at once in processes of their own, and no more files that need Docker than allowed', () => {
        const marks = temporaryDirectory('gatehouse-runner-');
        try {
            const result = runner(['--jobs', '3', ...PARALLEL], { GATEHOUSE_RUNNER_FIXTURE_DIR: marks, GATEHOUSE_TEST_DOCKER_JOBS: '1' });
            expect(result.output).to.contain('Running 4 files, up to 3 at once (of the 2 that need Docker, up to 1).');
            expect(result.closing, result.output).to.equal('Tests: 4 passed, 0 failed, 0 skipped');
            expect(result.status).to.equal(0);
        } finally {
            Fs.rmSync(marks, { recursive: true, force: true });
        }
    });

    it('leaves out of --fast the files that need Docker or a browser, and points Docker nowhere', () => {
        const marks = temporaryDirectory('gatehouse-runner-');
        try {
            const result = runner(['--fast', '--jobs', '3', FIXTURE, ...PARALLEL], { GATEHOUSE_RUNNER_FIXTURE_DIR: marks });
            expect(result.output).to.contain('Running 3 files, up to');
            expect(result.output).to.not.contain('docker-one');
            expect(result.closing, result.output).to.equal('Tests: 3 passed, 0 failed, 1 skipped');
        } finally {
            Fs.rmSync(marks, { recursive: true, force: true });
        }
    });

    it('runs the files that name one exclusive thing one at a time, and others beside them', () => {
        const marks = temporaryDirectory('gatehouse-runner-');
        try {
            const files = ['exclusive-one', 'exclusive-two', 'beside-pair'].map((name) =>
                Path.join('test', 'fixtures', 'runner', 'parallel', `${name}.ts`),
            );
            const result = runner(['--jobs', '3', ...files], { GATEHOUSE_RUNNER_FIXTURE_DIR: marks });
            expect(result.closing, result.output).to.equal('Tests: 3 passed, 0 failed, 0 skipped');
        } finally {
            Fs.rmSync(marks, { recursive: true, force: true });
        }
    });

    it('runs a file that needs to be alone with nothing beside it', () => {
        const marks = temporaryDirectory('gatehouse-runner-');
        try {
            const alone = Path.join('test', 'fixtures', 'runner', 'parallel', 'alone.ts');
            const result = runner(['--jobs', '3', alone, ...PARALLEL.slice(0, 2)], { GATEHOUSE_RUNNER_FIXTURE_DIR: marks });
            expect(result.closing, result.output).to.equal('Tests: 3 passed, 0 failed, 0 skipped');
        } finally {
            Fs.rmSync(marks, { recursive: true, force: true });
        }
    });
});
