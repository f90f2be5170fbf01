/**
 * Runs the lab suite: every test/**\/*.test.ts (or the files or folders given) is imported as an
 * ES module through tsx, so tests and the server share one module graph; lab then reports to the
 * console, and one plain closing line follows: `Tests: N passed, N failed, N skipped`.
 *
 * Options: --grep <text> runs only the tests whose title contains the text; --timeout <ms> per test;
 * --coverage (or COVERAGE=1) measures coverage, see runWithCoverage; --jobs <n> (or GATEHOUSE_TEST_JOBS) runs up to n
 * files at once, each in a process of its own, see runInParallel; --fast runs only the files that need neither Docker
 * nor a browser (a file says what it needs in a `// needs: docker, chromium` line near its top; `alone` among its needs
 * runs it with nothing beside it, `exclusive:<thing>` with no other file naming that thing, others beside it); --id <n> runs only the file's test number n (lab's numbering); --each runs every
 * test of the files given alone, each in a process of its own, and names those that fail alone, see runEachAlone;
 * --shuffle [seed] runs the tests of each file (and of each experiment in it) in an order shuffled by the seed, printed
 * so that a failure can be repeated: a test that needs an earlier one to have run fails in some order, at the cost of
 * one run instead of a process per test (--each).
 * Through npm they go after `--` (`npm test -- test/lib --grep cache`): npm keeps options before it for itself.
 * Under CI (CI set and not `false` or `0`) a run that skipped a test fails, naming the skipped tests.
 * GATEHOUSE_TEST_VERBOSE=1 lists each test with its time.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Os from 'node:os';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import Code from '@hapi/code';

import { seededRandom } from '../test/helpers/seeded-random.ts';

interface LabModule {
    script(options?: object): unknown;
    report(scripts: unknown[], options: object): Promise<{ code: number }>;
    execute(scripts: unknown[], options: object, reporter: null): Promise<{ tests: Array<{ id: number; title: string }> }>;
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

/** Set by runInParallel for its worker processes, see serveAsWorker. Taken out at once, as the closing line's file. */
const WORKER_VARIABLE = 'GATEHOUSE_TEST_WORKER';
const isWorker = process.env[WORKER_VARIABLE] === '1';
delete process.env[WORKER_VARIABLE];

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

/** Takes `--shuffle` and the seed after it, if it is a number, out of args; without one a seed is drawn. */
function shuffleSeed(args: string[]): number | undefined {
    const index = args.indexOf('--shuffle');
    if (index < 0) {
        return undefined;
    }

    const given = args[index + 1];
    const seeded = given !== undefined && /^\d+$/.test(given);
    args.splice(index, seeded ? 2 : 1);
    return seeded ? Number(given) : Math.floor(Math.random() * 1_000_000);
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
function countResults(tapFile: string, jsonFile: string): Results & { failures: string[] } {
    if (!Fs.existsSync(tapFile) || !Fs.existsSync(jsonFile)) {
        return { passed: 0, failed: 1, skipped: [], failures: ['no report: lab did not finish'] };
    }

    const report = JSON.parse(Fs.readFileSync(jsonFile, 'utf8')) as LabJsonReport;
    const results: Results & { failures: string[] } = { passed: 0, failed: 0, skipped: [], failures: [] };
    for (const line of Fs.readFileSync(tapFile, 'utf8').split('\n')) {
        const match = /^(ok|not ok) \d+ (?:# (SKIP|TODO) )?\(\d+\) (.*)$/.exec(line);
        if (!match) {
            continue;
        }

        const [, outcome, skip, title] = match;
        if (outcome === 'not ok') {
            results.failed += 1;
            results.failures.push(withReason(title ?? '', failureReason(report, title ?? '')));
        } else if (skip) {
            results.skipped.push(skip === 'TODO' ? `${title} (todo)` : (title ?? ''));
        } else {
            results.passed += 1;
        }
    }

    // Errors outside tests: a failing before/after hook, an exception thrown after a test ended.
    for (const error of report.errors ?? []) {
        results.failed += 1;
        results.failures.push(withReason('outside a test', error.message ?? 'an error'));
    }

    return results;
}

interface LabJsonReport {
    tests?: Record<string, { title: string; err: string | false }[]>;
    errors?: { message?: string }[];
}

/** Lab's message for a failed test (the JSON report keys tests by their describe path, so the title's end matches). */
function failureReason(report: LabJsonReport, fullTitle: string): string | undefined {
    const tests = Object.values(report.tests ?? {}).flat();
    const failed = tests.filter((test) => test.err !== false && fullTitle.endsWith(test.title));
    const longest = failed.sort((a, b) => b.title.length - a.title.length)[0];
    return longest && longest.err !== false ? longest.err : undefined;
}

// Playwright colours its call logs even when nothing reads them on a terminal.
// eslint-disable-next-line no-control-regex
const ANSI_ESCAPE = /\u001b\[[0-9;]*m/g;

// How much of a long failure message the closing summary keeps: its first and its last characters.
const REASON_HEAD = 300;
const REASON_TAIL = 900;

/**
 * A failure's title with its message, both ends of a long one: the closing summary is what a CI log keeps when it
 * keeps only its tail, so it says why as well as what. An assertion puts its own words last, after the caller's
 * (often a whole run's log), so the end is kept longer than the start.
 */
function withReason(title: string, reason: string | undefined): string {
    if (!reason) {
        return title;
    }

    const lines = reason
        .replace(ANSI_ESCAPE, '')
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .join(' | ');
    const short = lines.length > REASON_HEAD + REASON_TAIL ? `${lines.slice(0, REASON_HEAD)} … ${lines.slice(-REASON_TAIL)}` : lines;
    return `${title}\n      ${short}`;
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

interface FileOutcome extends Results {
    code: number;
    /** Titles of the failed tests, and of failures outside tests (hooks). */
    failures: string[];
}

interface RunOptions {
    timeout: number;
    grep: string | undefined;
    /** Lab's numbers of the tests to run (--id); none: all. */
    ids?: number[];
    /** Shuffles the order of each file's tests with this seed (--shuffle). */
    seed?: number;
}

/** Lab's experiment as its script holds it before the run; lab numbers tests in the order it runs them. */
interface LabExperiment {
    tests: unknown[];
    experiments: LabExperiment[];
}

function shuffleInPlace(items: unknown[], random: () => number): void {
    for (let index = items.length - 1; index > 0; index -= 1) {
        const other = Math.floor(random() * (index + 1));
        [items[index], items[other]] = [items[other], items[index]];
    }
}

/** Shuffles the tests of the experiment and of every experiment in it, and the experiments' own order. */
function shuffleExperiment(experiment: LabExperiment, random: () => number): void {
    shuffleInPlace(experiment.tests, random);
    shuffleInPlace(experiment.experiments, random);
    for (const child of experiment.experiments) {
        shuffleExperiment(child, random);
    }
}

/** The file's own seed: the run's seed mixed with its path, so files do not share one order pattern. */
function fileSeed(seed: number, file: string): number {
    let hash = seed >>> 0;
    for (const character of Path.relative(process.cwd(), Path.resolve(file))) {
        hash = Math.imul(hash ^ character.charCodeAt(0), 0x01000193) >>> 0;
    }

    return hash;
}

/**
 * Runs one test file as a lab report of its own, after printing its name, so that a run says which file it is in
 * and a file that fails to load or whose hooks fail is a failure named with its file, not the end of the run.
 */
async function runFile(file: string, options: RunOptions): Promise<FileOutcome> {
    console.log(`\n▶ ${file}`);
    const started = Date.now();
    const cpuAtStart = process.cpuUsage();
    let script: unknown;
    try {
        const module = (await import(pathToFileURL(Path.resolve(file)).href)) as { lab?: unknown };
        if (!module.lab) {
            throw new Error(`${file} does not export lab`);
        }

        script = module.lab;
        if (options.seed !== undefined) {
            shuffleExperiment((script as { _root: LabExperiment })._root, seededRandom(fileSeed(options.seed, file)));
        }
    } catch (error) {
        console.log(`${file} could not be loaded:`, error);
        return { code: 1, passed: 0, failed: 1, skipped: [], failures: [`could not be loaded (${describeThrown(error)})`] };
    }

    const reportDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-lab-'));
    const jsonFile = Path.join(reportDir, 'report.json');
    const tapFile = Path.join(reportDir, 'report.tap');
    try {
        const result = await Lab.report([script], {
            assert: Code,
            timeout: options.timeout,
            grep: options.grep === undefined ? undefined : literal(options.grep),
            ids: options.ids ?? [],
            reporter: ['console', 'json', 'tap'],
            output: [process.stdout, jsonFile, tapFile],
            environment: 'test',
            leaks: true,
            globals: [...TSLIB_GLOBALS, ...PLAYWRIGHT_GLOBALS],
            colors: false,
            // Each test's title and time instead of a dot (GATEHOUSE_TEST_VERBOSE=1): which tests are slow.
            progress: switchedOn('GATEHOUSE_TEST_VERBOSE') ? 2 : 1,
        });
        const outcome = countResults(tapFile, jsonFile);
        console.log(
            `◀ ${file}: ${outcome.passed} passed, ${outcome.failed} failed, ${outcome.skipped.length} skipped (${((Date.now() - started) / 1000).toFixed(1)} s, ${cpuSeconds(cpuAtStart)} s of CPU${sinceRunStarted(started)})`,
        );
        return { ...outcome, code: result.code };
    } finally {
        Fs.rmSync(reportDir, { recursive: true, force: true });
    }
}

/**
 * The CPU time this process (its worker threads too, so Bree's jobs) spent since `since`: on a machine whose cores
 * the run keeps busy, what makes a file cost. The programs it starts (git, docker, chromium) are not counted.
 */
function cpuSeconds(since: NodeJS.CpuUsage): string {
    const used = process.cpuUsage(since);
    return ((used.user + used.system) / 1e6).toFixed(1);
}

/** In a parallel run, when the file started, counted from the start of the run: what ran beside what. */
function sinceRunStarted(started: number): string {
    const runStarted = Number(process.env.GATEHOUSE_TEST_RUN_STARTED);
    return Number.isFinite(runStarted) && runStarted > 0 ? `, started at +${((started - runStarted) / 1000).toFixed(0)} s` : '';
}

/** What a thrown value was, for a failure's message: an Error's message, else the value itself. */
function describeThrown(thrown: unknown): string {
    if (thrown instanceof Error) {
        return thrown.message;
    }

    try {
        return `a non-Error value: ${JSON.stringify(thrown) ?? String(thrown)}`.slice(0, 500);
    } catch {
        return `a non-Error value: ${String(thrown)}`.slice(0, 500);
    }
}

interface LabTest {
    title: string;
    err?: unknown;
}

/**
 * Lab's reporters read `err.stack` of whatever a test or a hook threw, and a value without one (a plain object, a
 * string, undefined) crashed the whole run with a TypeError that named neither the test nor the cause. Every failure
 * is turned into an Error that names the test and what was thrown (kept as `data`) before any reporter sees it.
 */
function nameEveryFailure(): void {
    const require = createRequire(import.meta.url);
    const asError = (thrown: unknown, where: string): Error => {
        const error = Object.assign(new Error(`${where} threw ${describeThrown(thrown)}`), { data: thrown });
        error.stack = `${error.message}\n    (what was thrown had no stack)`;
        return error;
    };
    for (const name of ['console', 'json', 'tap']) {
        const Reporter = require(`@hapi/lab/lib/reporters/${name}.js`) as {
            prototype: { test(test: LabTest): void; end(notebook: { errors?: unknown[] }): void; __named?: boolean };
        };
        if (Reporter.prototype.__named) {
            continue;
        }

        const test = Reporter.prototype.test;
        Reporter.prototype.test = function (this: unknown, labTest: LabTest) {
            const err = labTest.err as { stack?: unknown } | undefined | null;
            if ('err' in labTest && (typeof err !== 'object' || err === null || typeof err.stack !== 'string')) {
                labTest.err = asError(labTest.err, `"${labTest.title}"`);
            }

            test.call(this, labTest);
        };
        const end = Reporter.prototype.end;
        Reporter.prototype.end = function (this: unknown, notebook: { errors?: unknown[] }) {
            notebook.errors = notebook.errors?.map((error) =>
                error instanceof Error && typeof error.stack === 'string' ? error : asError(error, 'a hook or an escaped callback'),
            );
            end.call(this, notebook);
        };
        Reporter.prototype.__named = true;
    }
}

/** What a file says it needs, from a `// needs: docker, chromium` line among its first lines. */
export function fileNeeds(file: string): string[] {
    const head = Fs.readFileSync(file, 'utf8').split('\n', 20);
    const line = head.find((text) => /^\/\/ needs: /.test(text));
    return line === undefined
        ? []
        : line
              .slice('// needs: '.length)
              .split(',')
              .map((need) => need.trim())
              .filter(Boolean);
}

/** The things among a file's needs that it holds to itself (`exclusive:swarm`): no two files naming one run at once. */
function exclusiveThings(needs: string[]): string[] {
    return needs.filter((need) => need.startsWith('exclusive:')).map((need) => need.slice('exclusive:'.length));
}

/** A count of processes from an option or a variable: a whole number of at least 1, else the fallback. */
function processCount(value: string | undefined, name: string, fallback: number): number {
    if (value === undefined) {
        return fallback;
    }

    const count = Number(value);
    if (!Number.isInteger(count) || count < 1) {
        throw new UsageError(`${name} needs a whole number of at least 1, not ${value}`);
    }

    return count;
}

const RUN_STARTED = Date.now();

/**
 * Runs the files in `jobs` worker processes, each running one file at a time as a lab report of its own, and prints
 * each file's output whole when it ends. Workers live for the whole run, so the server's modules load once per worker.
 * The files that need Docker share one engine: each gives its apps names of its own (a random suffix, or words no
 * other file uses) and its images tags of its own, and no more than GATEHOUSE_TEST_DOCKER_JOBS of them run at once.
 * They start first, largest first, as they take longest. Each worker writes its coverage, if measured, through the
 * NODE_V8_COVERAGE it inherits.
 */
async function runInParallel(
    files: string[],
    jobs: number,
    options: RunOptions,
    add: (file: string, outcome: FileOutcome) => void,
): Promise<void> {
    // At most GATEHOUSE_TEST_DOCKER_JOBS (4) files that need Docker at once. They are a quarter of the files but five
    // sixths of the time, so with three at most their queue was the whole run (the fourth worker idle once the
    // others were done: 18.6 min on SQLite on two cores); four at once took 12.3 min, the cores still 17 % idle.
    const slots = new NeedSlots(jobs);
    const needsDocker = new Set(files.filter((file) => slots.needs(file).includes('docker')));
    const size = (file: string) => Fs.statSync(file).size;
    const exclusiveCount = (file: string) => exclusiveThings(slots.needs(file)).length;
    // A file that holds a thing goes first: the others that need it wait for it, and the rest of the pool meanwhile.
    const first = (a: string, b: string) => exclusiveCount(b) - exclusiveCount(a) || size(b) - size(a);
    const waiting = [...[...needsDocker].sort(first), ...files.filter((file) => !needsDocker.has(file)).sort(first)];
    const workerCount = Math.min(jobs, files.length);
    console.log(
        `Running ${files.length} files, up to ${workerCount} at once (of the ${needsDocker.size} that need Docker, up to ${slots.dockerJobs}).`,
    );
    await new Promise<void>((resolve) => {
        const idle: TestWorker[] = [];
        let live = 0;
        const dispatch = () => {
            while (idle.length > 0) {
                // A file that must run alone goes before the others: they wait with it until nothing runs.
                const aloneIndex = waiting.findIndex((file) => slots.needs(file).includes('alone'));
                const index =
                    aloneIndex >= 0
                        ? slots.canStart(waiting[aloneIndex] as string)
                            ? aloneIndex
                            : -1
                        : waiting.findIndex((file) => slots.canStart(file));
                if (index < 0) {
                    break;
                }

                const [file] = waiting.splice(index, 1) as [string];
                slots.start(file);
                (idle.pop() as TestWorker).run(file);
            }

            if (waiting.length === 0) {
                idle.splice(0).forEach((worker) => worker.stop());
            }
        };
        const startWorker = () => {
            live += 1;
            const worker = new TestWorker(options, {
                finished: (file, outcome) => {
                    slots.end(file);
                    add(file, outcome);
                    if (worker.alive) {
                        idle.push(worker);
                        dispatch();
                    }
                },
                exited: (wasRunningAFile) => {
                    live -= 1;
                    const position = idle.indexOf(worker);
                    if (position >= 0) {
                        idle.splice(position, 1);
                    }

                    if (!wasRunningAFile && !worker.stopped && !worker.finishedAny) {
                        // It died before it ran anything: another would too, so what is left fails, named.
                        for (const file of waiting.splice(0)) {
                            add(file, { code: 1, passed: 0, failed: 1, skipped: [], failures: ['a worker process could not start'] });
                        }
                    }

                    // A worker that died running a file is replaced, so the rest still run.
                    if (waiting.length > 0) {
                        startWorker();
                    } else if (live === 0) {
                        resolve();
                    }
                },
            });
            idle.push(worker);
            dispatch();
        };
        for (let count = 0; count < workerCount; count += 1) {
            startWorker();
        }
    });
}

/** Marks the end of a file's output in a worker's standard output, followed by the file's outcome as JSON. */
const OUTCOME_MARK = '\u0000gatehouse-test-outcome\u0000';

/** A worker process: this script under GATEHOUSE_TEST_WORKER=1, given one file at a time over its IPC channel. */
class TestWorker {
    readonly #child: ReturnType<typeof spawn>;
    alive = true;
    stopped = false;
    finishedAny = false;
    #file: string | undefined;
    #output: Buffer[] = [];
    #pending = '';

    constructor(
        options: RunOptions,
        events: { finished(file: string, outcome: FileOutcome): void; exited(wasRunningAFile: boolean): void },
    ) {
        const args = [...process.execArgv, process.argv[1] ?? 'scripts/test.ts', '--timeout', String(options.timeout)];
        if (options.grep !== undefined) {
            args.push('--grep', options.grep);
        }

        if (options.seed !== undefined) {
            args.push('--shuffle', String(options.seed));
        }

        this.#child = spawn(process.execPath, args, {
            stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
            env: {
                ...process.env,
                GATEHOUSE_TEST_PREPARE: '0',
                [WORKER_VARIABLE]: '1',
                GATEHOUSE_TEST_RUN_STARTED: process.env.GATEHOUSE_TEST_RUN_STARTED ?? String(RUN_STARTED),
            },
        });
        this.#child.stderr?.on('data', (chunk: Buffer) => this.#output.push(chunk));
        this.#child.stdout?.on('data', (chunk: Buffer) => {
            this.#pending += chunk.toString('utf8');
            for (let mark = this.#pending.indexOf(OUTCOME_MARK); mark >= 0; mark = this.#pending.indexOf(OUTCOME_MARK)) {
                const end = this.#pending.indexOf('\n', mark);
                if (end < 0) {
                    break;
                }

                this.#output.push(Buffer.from(this.#pending.slice(0, mark)));
                const outcome = JSON.parse(this.#pending.slice(mark + OUTCOME_MARK.length, end)) as FileOutcome;
                this.#pending = this.#pending.slice(end + 1);
                events.finished(...this.#finish(), outcome);
            }
        });
        this.#child.once('exit', (code, signal) => {
            this.alive = false;
            const wasRunningAFile = this.#file !== undefined;
            if (wasRunningAFile) {
                this.#output.push(Buffer.from(this.#pending));
                const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
                const [file] = this.#finish();
                events.finished(file, { code: 1, passed: 0, failed: 1, skipped: [], failures: [`its worker process ended (${how})`] });
            }

            events.exited(wasRunningAFile);
        });
    }

    run(file: string): void {
        this.#file = file;
        this.#child.send(file);
    }

    stop(): void {
        this.stopped = true;
        this.#child.disconnect();
    }

    #finish(): [string] {
        process.stdout.write(Buffer.concat(this.#output));
        const file = this.#file ?? '';
        this.finishedAny = true;
        this.#output = [];
        this.#file = undefined;
        return [file];
    }
}

/** In a worker: runs each file the run sends, one at a time, and ends when the run lets go of it. */
async function serveAsWorker(options: RunOptions): Promise<number> {
    nameEveryFailure();
    const files: string[] = [];
    let wake: (() => void) | undefined;
    let open = true;
    process.on('message', (file: string) => {
        files.push(file);
        wake?.();
    });
    process.once('disconnect', () => {
        open = false;
        wake?.();
    });
    for (;;) {
        const file = files.shift();
        if (file === undefined) {
            if (!open) {
                return 0;
            }

            await new Promise<void>((resolve) => (wake = resolve));
            continue;
        }

        const outcome = await runFile(file, options);
        process.stdout.write(`${OUTCOME_MARK}${JSON.stringify(outcome)}\n`);
    }
}

/** A test's number as lab counts them in its file (from 1). */
function testId(value: string): number {
    const id = Number(value);
    if (!Number.isInteger(id) || id < 1) {
        throw new UsageError(`--id takes a test's number (1, 2, ...), not ${value}`);
    }

    return id;
}

/**
 * Runs every test of the files alone (--each): each in a process of its own (`--id`), as `--grep` with its title
 * would, so a test that leans on what an earlier one left fails here. Up to `jobs` such processes run at once, under
 * the same rules as whole files (NeedSlots), so never two tests of one file at once. Prints one line per test as it
 * ends, then the tests that failed alone and the closing line.
 */
async function runEachAlone(files: string[], jobs: number, options: RunOptions): Promise<number> {
    const queue: { file: string; id: number; title: string }[] = [];
    for (const file of files) {
        const module = (await import(pathToFileURL(Path.resolve(file)).href)) as { lab?: unknown };
        const grep = options.grep === undefined ? undefined : literal(options.grep);
        const { tests } = await Lab.execute([module.lab], { dry: true, grep }, null);
        queue.push(...tests.map((test) => ({ file, id: test.id, title: test.title })));
    }

    let passed = 0;
    const failures: string[] = [];
    const skipped: string[] = [];
    const slots = new NeedSlots(jobs);
    const running = new Set<Promise<void>>();
    while (queue.length > 0 || running.size > 0) {
        const index = queue.findIndex((test) => slots.canStart(test.file));
        if (index < 0) {
            await Promise.race(running);
            continue;
        }

        const [test] = queue.splice(index, 1) as [(typeof queue)[number]];
        slots.start(test.file);
        const run = runOneAlone(test.file, test.id, options).then(({ status, stdout }) => {
            slots.end(test.file);
            running.delete(run);
            const closing = /^Tests: (\d+) passed, (\d+) failed, (\d+) skipped/m.exec(stdout);
            const ok = status === 0 && closing?.[1] === '1' && closing[2] === '0';
            const wasSkipped = closing?.[3] === '1';
            const label = `${test.file} #${test.id}: ${test.title}`;
            console.log(`${ok ? 'passes alone' : wasSkipped ? 'skipped     ' : 'FAILS ALONE '} ${label}`);
            if (ok) {
                passed += 1;
            } else if (wasSkipped) {
                skipped.push(`${test.file}: ${test.title}`);
            } else {
                failures.push(`${test.file}: ${test.title}`);
                console.log(stdout.slice(-4_000));
            }
        });
        running.add(run);
    }

    if (failures.length > 0) {
        console.log(`Failed alone:\n${failures.map((title) => `  - ${title}`).join('\n')}`);
    }

    printClosingLine(`Tests: ${passed} passed, ${failures.length} failed, ${skipped.length} skipped`);
    return failures.length === 0 && passed > 0 && (skipped.length === 0 || !onCi()) ? 0 : 1;
}

/** One test of a file in a process of its own: its exit status and standard output. */
async function runOneAlone(file: string, id: number, options: RunOptions): Promise<{ status: number | null; stdout: string }> {
    const args = [...process.execArgv, process.argv[1] ?? 'scripts/test.ts', '--jobs', '1', '--timeout', String(options.timeout)];
    const child = spawn(process.execPath, [...args, '--id', String(id), file], {
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...process.env, GATEHOUSE_TEST_PREPARE: '0' },
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const [status] = (await once(child, 'close')) as [number | null];
    return { status, stdout: Buffer.concat(chunks).toString('utf8') };
}

/**
 * Which files (or, under --each, which files' tests) may start now, by the files' needs: no more than `jobs` at once,
 * Docker slots, `alone`, `exclusive:` things, and never two runs of one file at once (a file names its apps, images and
 * folders once). Each file's needs are read once.
 */
class NeedSlots {
    readonly #jobs: number;
    readonly dockerJobs: number;
    readonly #needs = new Map<string, string[]>();
    #running = 0;
    #dockerRunning = 0;
    #aloneRunning = false;
    readonly #held = new Set<string>();

    constructor(jobs: number) {
        this.#jobs = jobs;
        this.dockerJobs = Math.min(processCount(process.env.GATEHOUSE_TEST_DOCKER_JOBS, 'GATEHOUSE_TEST_DOCKER_JOBS', 4), jobs);
    }

    needs(file: string): string[] {
        let needs = this.#needs.get(file);
        if (needs === undefined) {
            needs = fileNeeds(file);
            this.#needs.set(file, needs);
        }

        return needs;
    }

    canStart(file: string): boolean {
        const needs = this.needs(file);
        if (this.#running >= this.#jobs || this.#aloneRunning || (needs.includes('alone') && this.#running > 0)) {
            return false;
        }

        return (
            (!needs.includes('docker') || this.#dockerRunning < this.dockerJobs) &&
            this.#things(file).every((thing) => !this.#held.has(thing))
        );
    }

    start(file: string): void {
        this.#move(file, 1);
    }

    end(file: string): void {
        this.#move(file, -1);
    }

    #move(file: string, step: 1 | -1): void {
        const needs = this.needs(file);
        this.#running += step;
        this.#dockerRunning += needs.includes('docker') ? step : 0;
        this.#aloneRunning = step === 1 ? this.#aloneRunning || needs.includes('alone') : this.#aloneRunning && !needs.includes('alone');
        this.#things(file).forEach((thing) => (step === 1 ? this.#held.add(thing) : this.#held.delete(thing)));
    }

    /** What a run holds while it goes on: its file's `exclusive:` things, and the file itself. */
    #things(file: string): string[] {
        return [...exclusiveThings(this.needs(file)), `file:${file}`];
    }
}

/**
 * Installs the Debian packages the suite drives when missing and starts the Docker engine (scripts/services.sh
 * prepare), so that `npm test` is all a fresh machine needs. Only as root; GATEHOUSE_TEST_PREPARE=0 leaves it out.
 */
function prepareMachine(): void {
    if (process.env.GATEHOUSE_TEST_PREPARE === '0' || process.platform !== 'linux') {
        return;
    }

    if (process.getuid?.() !== 0) {
        console.log('Not root: Debian packages and the Docker engine are not prepared (scripts/services.sh prepare).');
        return;
    }

    const prepared = spawnSync('bash', [Path.join('scripts', 'services.sh'), 'prepare'], {
        stdio: ['ignore', 'ignore', 'inherit'],
        timeout: 1_200_000,
    });
    if (prepared.status !== 0) {
        const message = 'scripts/services.sh prepare failed: the packages or the Docker engine the suite drives are missing';
        if (onCi()) {
            throw new Error(message);
        }

        console.log(`${message}; tests that need them will fail.`);
    }
}

async function main(): Promise<number> {
    const args = process.argv.slice(2);
    const coverage = flag(args, '--coverage') || switchedOn('COVERAGE');
    const grep = option(args, '--grep');
    const timeout = Number(option(args, '--timeout') ?? 120_000);
    // By default two more than the cores, as most files spend their time waiting.
    const jobs = processCount(option(args, '--jobs') ?? process.env.GATEHOUSE_TEST_JOBS, '--jobs', Os.availableParallelism() + 2);
    const fast = flag(args, '--fast');
    const each = flag(args, '--each');
    const id = option(args, '--id');
    const ids = id === undefined ? undefined : [testId(id)];
    const seed = shuffleSeed(args);
    if (seed !== undefined && (ids || each)) {
        throw new UsageError('--shuffle orders whole files: not with --id or --each');
    }
    const files = testFiles(args.length > 0 ? args : ['test']).filter((file) => !fast || fileNeeds(file).length === 0);
    if (fast) {
        // What a fast file would reach of the Docker engine is not there: a file that needs it and does not say so fails.
        process.env.DOCKER_HOST = 'unix:///nonexistent/gatehouse-test-fast-docker.sock';
    }

    if (process.env.NODE_V8_COVERAGE === undefined && !fast) {
        prepareMachine();
    }

    // With NODE_V8_COVERAGE set, coverage is being written for someone else: this process only runs the tests.
    if (coverage && process.env.NODE_V8_COVERAGE === undefined) {
        return runWithCoverage(args.length === 0 && grep === undefined && !fast);
    }

    if (isWorker) {
        return await serveAsWorker({ timeout, grep, seed });
    }

    if (each) {
        return await runEachAlone(files, jobs, { timeout, grep });
    }

    if (ids && files.length !== 1) {
        throw new UsageError('--id numbers the tests of one file: give exactly one file');
    }

    const totals: Results & { failures: string[] } = { passed: 0, failed: 0, skipped: [], failures: [] };
    let labCode = 0;
    const add = (file: string, outcome: FileOutcome) => {
        totals.passed += outcome.passed;
        totals.failed += outcome.failed;
        totals.skipped.push(...outcome.skipped);
        totals.failures.push(...outcome.failures.map((title) => `${file}: ${title}`));
        labCode = labCode || outcome.code;
    };
    if (seed !== undefined) {
        console.log(`Tests run in an order shuffled with seed ${seed}: --shuffle ${seed} repeats it.`);
    }

    if (jobs > 1 && files.length > 1 && ids === undefined) {
        await runInParallel(files, jobs, { timeout, grep, seed }, add);
    } else {
        nameEveryFailure();
        for (const file of files) {
            add(file, await runFile(file, { timeout, grep, ids, seed }));
        }
    }

    const { passed, failed, skipped } = totals;
    let code = labCode === 0 && failed === 0 && passed > 0 ? 0 : 1;
    if (passed + failed + skipped.length === 0) {
        console.log(grep === undefined ? 'No test ran.' : `No test title contains "${grep}".`);
    }

    if (totals.failures.length > 0) {
        console.log(`Failed:\n${totals.failures.map((title) => `  - ${title}`).join('\n')}`);
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
