/**
 * Import cycles between the parts of the code: top-level parts (lib, jobs, each plugins/<part>) and the concept
 * folders of the two services (plugins/git|deploy/domain/<concept>). `npm run lint` runs it: a cycle that is not one
 * of KNOWN_CYCLES fails (a new one, or a known one that grew), and so does a known one that is gone, so that the list
 * only shrinks. Usage: node --import tsx scripts/import-cycles.ts [root]
 */
import Fs from 'node:fs';
import Path from 'node:path';

import ts from 'typescript';

/** The cycles there were when this check came in, each to be broken; none may be added. */
export const KNOWN_CYCLES: readonly string[][] = [
    [
        'plugins/deploy/domain/access',
        'plugins/deploy/domain/apps',
        'plugins/deploy/domain/catalog',
        'plugins/deploy/domain/engine',
        'plugins/deploy/domain/evidence',
        'plugins/deploy/domain/lifecycle',
        'plugins/deploy/domain/recipes',
        'plugins/deploy/domain/runs',
    ],
];

const SOURCE_FOLDERS = ['lib', 'jobs', 'plugins'];

function sourceFiles(root: string): string[] {
    const found: string[] = [];
    const walk = (dir: string) => {
        for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
            const path = Path.join(dir, entry.name);
            if (entry.isDirectory()) walk(path);
            else if (entry.name.endsWith('.ts')) found.push(path);
        }
    };
    for (const folder of SOURCE_FOLDERS) {
        if (Fs.existsSync(Path.join(root, folder))) walk(Path.join(root, folder));
    }

    return found;
}

/** The top-level part of a file: lib, jobs, or plugins/<folder or file>. */
function topPart(relative: string[]): string {
    return relative[0] === 'plugins' ? `plugins/${(relative[1] ?? '').replace(/\.ts$/, '')}` : (relative[0] ?? '');
}

/** The concept folder of a file of a service's domain, or its top-level part elsewhere. */
function conceptPart(relative: string[]): string {
    const [base, service, layer, concept] = relative;
    return base === 'plugins' && (service === 'git' || service === 'deploy') && layer === 'domain' && concept && relative.length > 4
        ? `plugins/${service}/domain/${concept}`
        : topPart(relative);
}

function importEdges(root: string, partOf: (relative: string[]) => string): Map<string, Set<string>> {
    const edges = new Map<string, Set<string>>();
    for (const file of sourceFiles(root)) {
        const from = partOf(Path.relative(root, file).split(Path.sep));
        for (const { fileName } of ts.preProcessFile(Fs.readFileSync(file, 'utf8'), true, true).importedFiles) {
            if (!fileName.startsWith('.')) continue;
            const target = Path.resolve(Path.dirname(file), fileName);
            if (!Fs.existsSync(target)) continue;
            const to = partOf(Path.relative(root, target).split(Path.sep));
            if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
        }
    }

    return edges;
}

/** The strongly connected groups of more than one part (Tarjan's algorithm), each sorted. */
function cyclesOf(edges: Map<string, Set<string>>): string[][] {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (node: string) => {
        index.set(node, index.size);
        low.set(node, index.get(node) ?? 0);
        stack.push(node);
        onStack.add(node);
        for (const next of edges.get(node) ?? []) {
            if (!index.has(next)) {
                visit(next);
                low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
            } else if (onStack.has(next)) {
                low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
            }
        }

        if (low.get(node) === index.get(node)) {
            const group: string[] = [];
            for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
                onStack.delete(member);
                group.push(member);
                if (member === node) break;
            }

            if (group.length > 1) cycles.push(group.sort());
        }
    };
    for (const node of edges.keys()) {
        if (!index.has(node)) visit(node);
    }

    return cycles;
}

/** The cycles at both levels, each once. */
export function importCycles(root: string): string[][] {
    const all = [...cyclesOf(importEdges(root, topPart)), ...cyclesOf(importEdges(root, conceptPart))];
    const seen = new Set<string>();
    return all.filter((cycle) => !seen.has(cycle.join(' ')) && seen.add(cycle.join(' ')));
}

/** What is wrong against the known cycles: new or grown ones, and known ones that are gone. */
export function cycleProblems(found: string[][], known: readonly string[][] = KNOWN_CYCLES): string[] {
    const key = (cycle: readonly string[]) => [...cycle].sort().join(' ');
    const knownKeys = new Set(known.map(key));
    const foundKeys = new Set(found.map(key));
    return [
        ...found.filter((cycle) => !knownKeys.has(key(cycle))).map((cycle) => `an import cycle: ${cycle.join(' -> ')} (break it)`),
        ...known
            .filter((cycle) => !foundKeys.has(key(cycle)))
            .map((cycle) => `no longer a cycle, take it out of KNOWN_CYCLES: ${cycle.join(', ')}`),
    ];
}

if (process.argv[1] && Path.resolve(process.argv[1]) === Path.resolve(import.meta.filename)) {
    const problems = cycleProblems(importCycles(Path.resolve(process.argv[2] ?? Path.join(import.meta.dirname, '..'))));
    for (const problem of problems) console.error(`scripts/import-cycles.ts: ${problem}`);
    process.exit(problems.length > 0 ? 1 : 0);
}
