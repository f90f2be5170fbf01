/**
 * Runs the lab suite: every test/**\/*.test.ts (or the files or folders given) is imported as an
 * ES module through tsx, so tests and the server share one module graph; lab then reports to the
 * console and to JSON, and one plain closing line follows: `Tests: N passed, N failed, N skipped`.
 *
 * Options: --grep <text> runs only the tests whose title contains it; --timeout <ms> per test.
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

interface LabReport {
    tests: Record<string, Array<{ title: string; err: string | false }>>;
    errors?: Array<{ message: string }>;
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
    roots.forEach(walk);
    return files.sort();
}

function option(args: string[], name: string): string | undefined {
    const index = args.indexOf(name);
    return index >= 0 ? args.splice(index, 2)[1] : undefined;
}

function countResults(reportFile: string): { passed: number; failed: number } {
    if (!Fs.existsSync(reportFile)) {
        return { passed: 0, failed: 1 };
    }

    const report = JSON.parse(Fs.readFileSync(reportFile, 'utf8')) as LabReport;
    const results = Object.values(report.tests).flat();
    const failed = results.filter((test) => test.err !== false).length + (report.errors?.length ?? 0);
    return { passed: results.length - (failed - (report.errors?.length ?? 0)), failed };
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

    const reportFile = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-lab-')), 'report.json');
    const result = await Lab.report(scripts, {
        assert: Code,
        timeout,
        grep,
        reporter: ['console', 'json'],
        output: [process.stdout, reportFile],
        environment: 'test',
        leaks: true,
        globals: TSLIB_GLOBALS,
        colors: false,
    });
    const { passed, failed } = countResults(reportFile);
    console.log(`Tests: ${passed} passed, ${failed} failed, 0 skipped`);
    return result.code === 0 && failed === 0 && passed > 0 ? 0 : 1;
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
        console.error(error);
        console.log('Tests: 0 passed, 1 failed, 0 skipped');
        process.exit(1);
    },
);
