/**
 * Runs the lab suite: every test/**\/*.test.ts (or the files or folders given) is imported as an
 * ES module through tsx, so tests and the server share one module graph; lab then reports to the
 * console, and one plain closing line follows: `Tests: N passed, N failed, N skipped`.
 *
 * Options: --grep <text> runs only the tests whose title contains the text; --timeout <ms> per test;
 * --coverage (or COVERAGE=1) measures coverage, see runWithCoverage.
 * Through npm they go after `--` (`npm test -- test/lib --grep cache`): npm keeps options before it for itself.
 * Under CI (CI set and not `false` or `0`) a run that skipped a test fails, naming the skipped tests.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
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

/**
 * Set by a coverage run for the process that runs the tests: the file where that process leaves its closing line,
 * for the coverage run to print after the coverage summary. Taken out of the environment at once, so that runners
 * started by tests (test/scripts) print theirs as usual.
 */
const CLOSING_LINE_FILE_VARIABLE = 'GATEHOUSE_TEST_CLOSING_LINE_FILE';
const closingLineFile = process.env[CLOSING_LINE_FILE_VARIABLE];
delete process.env[CLOSING_LINE_FILE_VARIABLE];

function printClosingLine(line: string): void {
    if (closingLineFile === undefined) {
        console.log(line);
    } else {
        Fs.writeFileSync(closingLineFile, line);
    }
}

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

/** Takes the flag `name` out of args; npm keeps `npm test --coverage` for itself as npm_config_coverage=true. */
function flag(args: string[], name: string): boolean {
    const index = args.indexOf(name);
    if (index >= 0) {
        args.splice(index, 1);
        return true;
    }

    return process.env[`npm_config_${name.slice(2)}`] === 'true';
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

/** An environment variable that is on: set, and neither `false` nor `0`. */
function switchedOn(name: string): boolean {
    const value = process.env[name] ?? '';
    return value !== '' && value !== 'false' && value !== '0';
}

function onCi(): boolean {
    return switchedOn('CI');
}

/** The `c8` section of package.json: what coverage counts, and the threshold. */
interface CoverageSettings {
    include: string[];
    extension?: string[];
    all?: boolean;
    reporter: string[];
    /** The least share of lines, in percent, that a run of the whole suite must cover. */
    lines: number;
}

function coverageSettings(): CoverageSettings {
    const manifest = JSON.parse(Fs.readFileSync('package.json', 'utf8')) as { c8?: Partial<CoverageSettings> };
    const settings = manifest.c8;
    if (!settings || typeof settings.lines !== 'number' || !Array.isArray(settings.include) || !Array.isArray(settings.reporter)) {
        throw new UsageError('package.json needs a c8 section with include, reporter and lines (the threshold) for --coverage');
    }

    return settings as CoverageSettings;
}

interface CoverageTotal {
    total: number;
    covered: number;
    pct: number;
}

interface CoverageSummary {
    lines: CoverageTotal;
    branches: CoverageTotal;
    functions: CoverageTotal;
}

/** The part of c8's Report (c8/lib/report.js) used here. */
interface C8Report {
    run(): Promise<void>;
    getCoverageMapFromAllCoverageFiles(): Promise<{ getCoverageSummary(): CoverageSummary }>;
}

type C8 = { Report(options: object): C8Report };

const COVERAGE_DIR = 'coverage';

/** Writes the reports into coverage/ from the raw V8 files, which it then removes, and returns the totals. */
async function reportCoverage(settings: CoverageSettings, rawDir: string): Promise<CoverageSummary> {
    const c8 = createRequire(import.meta.url)('c8') as C8;
    const report = c8.Report({
        include: settings.include,
        extension: settings.extension,
        all: settings.all ?? false,
        reporter: settings.reporter,
        reportsDirectory: COVERAGE_DIR,
        tempDirectory: rawDir,
        excludeNodeModules: true,
        // One process's coverage at a time: the raw files of a whole run are large.
        mergeAsync: true,
    });
    await report.run();
    const summary = (await report.getCoverageMapFromAllCoverageFiles()).getCoverageSummary();
    Fs.rmSync(rawDir, { recursive: true, force: true });
    return summary;
}

/**
 * Runs the tests in a child process with NODE_V8_COVERAGE set, so that Node's own (V8) coverage is written by it, by
 * the Bree worker threads and by every Node process the tests start (Node passes the variable on even to a child given
 * an environment of its own). lab's coverage cannot serve: it instruments through a CommonJS require hook, and tsx
 * loads the tests and the server as ES modules. c8 then maps the figures back to the TypeScript through the source
 * maps tsx gives Node. The summary comes before the child's closing line, and a run of the whole suite under the
 * threshold fails.
 */
async function runWithCoverage(wholeSuite: boolean): Promise<number> {
    const settings = coverageSettings();
    const rawDir = Path.resolve(COVERAGE_DIR, 'tmp');
    Fs.rmSync(COVERAGE_DIR, { recursive: true, force: true });
    Fs.mkdirSync(rawDir, { recursive: true });
    const handOffDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-coverage-'));
    const handOffFile = Path.join(handOffDir, 'closing-line');
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
        stdio: 'inherit',
        env: { ...process.env, NODE_V8_COVERAGE: rawDir, [CLOSING_LINE_FILE_VARIABLE]: handOffFile },
    });
    const [exitCode] = (await once(child, 'exit')) as [number | null];
    const closingLine = Fs.existsSync(handOffFile) ? Fs.readFileSync(handOffFile, 'utf8') : 'Tests: 0 passed, 1 failed, 0 skipped';
    Fs.rmSync(handOffDir, { recursive: true, force: true });

    let code = exitCode === 0 ? 0 : 1;
    try {
        const { lines, branches, functions } = await reportCoverage(settings, rawDir);
        const share = (total: CoverageTotal, what: string) => `${total.pct}% of ${what} (${total.covered}/${total.total})`;
        console.log(
            `Coverage: ${share(lines, 'lines')}, ${share(branches, 'branches')}, ${share(functions, 'functions')}; report in ${COVERAGE_DIR}/`,
        );
        const threshold = `the threshold of ${settings.lines}% of lines (c8.lines in package.json)`;
        if (!wholeSuite) {
            console.log(`Coverage: ${threshold} is checked on runs of the whole suite only.`);
        } else if (lines.pct < settings.lines) {
            console.log(`Coverage: ${lines.pct}% of lines is under ${threshold}.`);
            code = 1;
        } else {
            console.log(`Coverage: ${lines.pct}% of lines meets ${threshold}.`);
        }
    } catch (error) {
        console.error('Coverage could not be reported:', error);
        code = 1;
    }

    console.log(closingLine);
    return code;
}

async function main(): Promise<number> {
    const args = process.argv.slice(2);
    const coverage = flag(args, '--coverage') || switchedOn('COVERAGE');
    const grep = option(args, '--grep');
    const timeout = Number(option(args, '--timeout') ?? 120_000);
    const files = testFiles(args.length > 0 ? args : ['test']);
    // With NODE_V8_COVERAGE set, coverage is being written for someone else: this process only runs the tests.
    if (coverage && process.env.NODE_V8_COVERAGE === undefined) {
        return runWithCoverage(args.length === 0 && grep === undefined);
    }

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
        globals: [...TSLIB_GLOBALS, ...PLAYWRIGHT_GLOBALS],
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

    printClosingLine(`Tests: ${passed} passed, ${failed} failed, ${skipped.length} skipped`);
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

/** playwright-core (the browser tests) bundles zod, which keeps its registry on globalThis, and signal-exit. */
const PLAYWRIGHT_GLOBALS = ['__zod_globalConfig', '__zod_globalRegistry', 'Symbol(signal-exit emitter)'];

main().then(
    (code) => process.exit(code),
    (error: unknown) => {
        console.error(error instanceof UsageError ? error.message : error);
        printClosingLine('Tests: 0 passed, 1 failed, 0 skipped');
        process.exit(1);
    },
);
