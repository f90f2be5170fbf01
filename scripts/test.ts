/**
 * Runs the lab suite: every test/**\/*.test.ts (or the files or folders given) is imported as an
 * ES module through tsx, so tests and the server share one module graph; lab then reports to the
 * console, and one plain closing line follows: `Tests: N passed, N failed, N skipped`.
 *
 * Options: --grep <text> runs only the tests whose title contains the text; --timeout <ms> per test.
 * Through npm they go after `--` (`npm test -- test/lib --grep cache`): npm keeps options before it for itself.
 * Under CI (CI set and not `false` or `0`) a run that skipped a test fails, naming the skipped tests.
 */
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Os from 'node:os';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import Code from '@hapi/code';

interface LabModule {
    script(options?: object): unknown;
    report(scripts: unknown[], options: object): Promise<{ code: number }>;
}

// Lab runs a script by itself unless told not to; this runner runs them all together, so scripts are
// made unscheduled. The CommonJS export is patched before any test file imports it.
const Lab = createRequire(import.meta.url)('@hapi/lab') as LabModule;
const makeScript = Lab.script;
Lab.script = (options = {}) => makeScript({ ...options, schedule: false });

/** A mistake in how the runner was called: shown as its message alone, without a stack. */
class UsageError extends Error {}

interface Results {
    passed: number;
    failed: number;
    /** Titles of the tests that were skipped (`skip`, or another test's `only`) or are todo (no function). */
    skipped: string[];
}

function testFiles(roots: string[]): string[] {
    const files: string[] = [];
    const walk = (path: string) => {
        if (Fs.statSync(path).isFile()) {
            files.push(path);
            return;
        }

        for (const entry of Fs.readdirSync(path)) {
            const child = Path.join(path, entry);
            if (Fs.statSync(child).isDirectory() || child.endsWith('.test.ts')) {
                walk(child);
            }
        }
    };
    for (const root of roots) {
        if (!Fs.existsSync(root)) {
            throw new UsageError(`no such test file or folder: ${root}`);
        }

        walk(root);
    }

    return files.sort();
}

/** Takes `name value` or `name=value` out of args. */
function option(args: string[], name: string): string | undefined {
    const index = args.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
    if (index < 0) {
        return npmOption(name);
    }

    const [arg] = args.splice(index, 1) as [string];
    const value = arg === name ? args.splice(index, 1)[0] : arg.slice(name.length + 1);
    if (value === undefined || value === '') {
        throw new UsageError(`${name} needs a value`);
    }

    return value;
}

/**
 * npm keeps the options before `--` that it does not know: `npm test --grep=text` arrives as npm_config_grep, and
 * `npm test file --grep text` as npm_config_grep=true with the text left among the file names.
 */
function npmOption(name: string): string | undefined {
    const value = process.env[`npm_config_${name.slice(2)}`];
    if (value === 'true') {
        throw new UsageError(`npm took ${name} for itself: put the runner's options after --, as in npm test -- [files] ${name} <value>`);
    }

    return value;
}

/** Lab's grep is a regular expression; ours is plain text, as people type titles with brackets and dots. */
function literal(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Counts from lab's TAP report (the one that tells skipped and todo tests apart) and its JSON report's errors. */
function countResults(tapFile: string, jsonFile: string): Results {
    if (!Fs.existsSync(tapFile) || !Fs.existsSync(jsonFile)) {
        return { passed: 0, failed: 1, skipped: [] };
    }

    const results: Results = { passed: 0, failed: 0, skipped: [] };
    for (const line of Fs.readFileSync(tapFile, 'utf8').split('\n')) {
        const match = /^(ok|not ok) \d+ (?:# (SKIP|TODO) )?\(\d+\) (.*)$/.exec(line);
        if (!match) {
            continue;
        }

        const [, outcome, skip, title] = match;
        if (outcome === 'not ok') {
            results.failed += 1;
        } else if (skip) {
            results.skipped.push(skip === 'TODO' ? `${title} (todo)` : (title ?? ''));
        } else {
            results.passed += 1;
        }
    }

    // Errors outside tests: a failing before/after hook, an exception thrown after a test ended.
    const report = JSON.parse(Fs.readFileSync(jsonFile, 'utf8')) as { errors?: unknown[] };
    results.failed += report.errors?.length ?? 0;
    return results;
}

function onCi(): boolean {
    const ci = process.env.CI ?? '';
    return ci !== '' && ci !== 'false' && ci !== '0';
}

async function main(): Promise<number> {
    const args = process.argv.slice(2);
    const grep = option(args, '--grep');
    const timeout = Number(option(args, '--timeout') ?? 120_000);
    const files = testFiles(args.length > 0 ? args : ['test']);
    const scripts: unknown[] = [];
    for (const file of files) {
        const module = (await import(pathToFileURL(Path.resolve(file)).href)) as { lab?: unknown };
        if (!module.lab) {
            throw new Error(`${file} does not export lab`);
        }

        scripts.push(module.lab);
    }

    const reportDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-lab-'));
    const jsonFile = Path.join(reportDir, 'report.json');
    const tapFile = Path.join(reportDir, 'report.tap');
    const result = await Lab.report(scripts, {
        assert: Code,
        timeout,
        grep: grep === undefined ? undefined : literal(grep),
        reporter: ['console', 'json', 'tap'],
        output: [process.stdout, jsonFile, tapFile],
        environment: 'test',
        leaks: true,
        globals: TSLIB_GLOBALS,
        colors: false,
    });
    const { passed, failed, skipped } = countResults(tapFile, jsonFile);
    Fs.rmSync(reportDir, { recursive: true, force: true });
    let code = result.code === 0 && failed === 0 && passed > 0 ? 0 : 1;
    if (passed + failed + skipped.length === 0) {
        console.log(grep === undefined ? 'No test ran.' : `No test title contains "${grep}".`);
    }

    if (skipped.length > 0 && onCi()) {
        console.log(`Under CI a skipped test fails the run; skipped:\n${skipped.map((title) => `  - ${title}`).join('\n')}`);
        code = 1;
    }

    console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped.length} skipped`);
    return code;
}

/**
 * tslib's UMD build, loaded by acme-client's dependencies (@peculiar/*), defines its helpers on globalThis
 * by design; they are not leaks of ours.
 */
const TSLIB_GLOBALS = [
    '__extends',
    '__assign',
    '__rest',
    '__decorate',
    '__param',
    '__esDecorate',
    '__runInitializers',
    '__propKey',
    '__setFunctionName',
    '__metadata',
    '__awaiter',
    '__generator',
    '__exportStar',
    '__createBinding',
    '__values',
    '__read',
    '__spread',
    '__spreadArrays',
    '__spreadArray',
    '__await',
    '__asyncGenerator',
    '__asyncDelegator',
    '__asyncValues',
    '__makeTemplateObject',
    '__importStar',
    '__importDefault',
    '__classPrivateFieldGet',
    '__classPrivateFieldSet',
    '__classPrivateFieldIn',
    '__addDisposableResource',
    '__disposeResources',
    '__rewriteRelativeImportExtension',
];

main().then(
    (code) => process.exit(code),
    (error: unknown) => {
        console.error(error instanceof UsageError ? error.message : error);
        console.log('Tests: 0 passed, 1 failed, 0 skipped');
        process.exit(1);
    },
);
