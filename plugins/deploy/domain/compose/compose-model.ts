/**
 * The compose model: a typed view of a docker-compose file covering what self-hosted apps use, parsed from
 * and rendered to YAML without loss. What the model does not cover is kept verbatim in `extra`. Its types are
 * in compose-types.ts; this module holds the entry points, which the model's modules do not import.
 */
import { forField } from '../../../../lib/errors.ts';
import type { Finding } from '../findings/finding.ts';
import { checkConfiguration, imagesWithHealthcheck } from './compose-checks.ts';
import type { LintContext } from './compose-host-paths.ts';
import { lintSpec } from './compose-lint.ts';
import { formatPath } from './compose-path.ts';
import { type ModelReading, plainFromModel, readModel, readModelJson } from './compose-read.ts';
import { schemaFindings } from './compose-schema.ts';
import { type SiteLocation, sitePortFindings } from './compose-site-ports.ts';
import type { ComposeSpec, ValidateOptions } from './compose-types.ts';
import { type ComposeSource, ComposeTextError, readComposeText, writeComposeText } from './compose-yaml.ts';
import { describeProblem, type ShapeProblem } from './shape-reader.ts';

export { parseCompose } from './compose-parse.ts';

/** Renders the model as compose YAML; parsing the text gives the same model back. */
export function renderCompose(spec: ComposeSpec): string {
    return writeComposeText(plainFromModel(spec));
}

/** Errors that would stop a deploy: the Compose schema, `${VAR}`s without a value, busy host ports, unknown images. */
export async function validateCompose(spec: ComposeSpec, options: ValidateOptions = {}): Promise<Finding[]> {
    const schema = schemaFindings(plainFromModel(spec));
    const configuration = await checkConfiguration(spec, {
        secrets: options.secrets ?? {},
        checkHostPorts: options.checkHostPorts ?? true,
    });
    return [...schema, ...configuration];
}

export { type LintContext, lintContextFor } from './compose-host-paths.ts';

/**
 * Risks (need acceptRisks to deploy), warnings and information about how the services are set up. Host paths
 * are judged where the deploy will find them: after `${VAR}`s take the context's values, against its app folder.
 */
export function lintCompose(spec: ComposeSpec, context: LintContext): Finding[] {
    return lintSpec(spec, context);
}

/** Lint that knows which of the file's images, among those the engine has, declare their own health check. */
export async function lintComposeWithImages(spec: ComposeSpec, context: LintContext): Promise<Finding[]> {
    return lintSpec(spec, { ...context, imagesWithHealthcheck: await imagesWithHealthcheck(spec, context.values) });
}

export { type SiteLocation, sitePortFindings } from './compose-site-ports.ts';

/** A compose file as the API takes it: YAML text, or the model as JSON. */
export type ComposeFile = { text: string } | { spec: unknown };

export interface FileCheckOptions extends ValidateOptions {
    lint: LintContext;
    /** The locations of the app's nginx site: each must reach a port the file publishes. */
    site?: SiteLocation[];
}

export interface FileCheck {
    ok: boolean;
    errors: Finding[];
    lint: Finding[];
}

const SCHEMA_FIX = 'correct it as the Compose specification says';

/**
 * What `/validate` answers: every error that would stop a deploy, and lint. A file the model cannot read (text
 * that is no compose document, values of the wrong type anywhere the model reads) has each of its mistakes in
 * errors, with the schema's other errors; the other checks and lint need the model, and run once it reads.
 * What bounded reading refuses (alias bombs, deep nesting) is a ValidationError naming the request's field.
 */
export async function checkComposeFile(file: ComposeFile, options: FileCheckOptions): Promise<FileCheck> {
    const reading = readFile(file);
    if (reading instanceof ComposeTextError) {
        return { ok: false, errors: [{ path: '', level: 'error', message: reading.message, fix: 'correct the YAML' }], lint: [] };
    }

    if (reading.problems.length > 0) {
        return { ok: false, errors: readingErrors(reading), lint: [] };
    }

    const site = options.site === undefined ? [] : sitePortFindings(reading.spec, options.site, options.secrets ?? {});
    const errors = [...(await validateCompose(reading.spec, options)), ...site.filter((finding) => finding.level === 'error')];
    const lint = [...(await lintComposeWithImages(reading.spec, options.lint)), ...site.filter((finding) => finding.level !== 'error')];
    return { ok: errors.length === 0, errors, lint };
}

function readFile(file: ComposeFile): ModelReading | ComposeTextError {
    if ('spec' in file) {
        return forField('spec', () => readModelJson(file.spec));
    }

    const source = forField('text', () => readTextOrMistake(file.text));
    return source instanceof ComposeTextError ? source : readModel(source.value, source.lineOf);
}

/** The text's mistake is returned: forField would make it a plain ValidationError. */
function readTextOrMistake(text: string): ComposeSource | ComposeTextError {
    try {
        return readComposeText(text);
    } catch (error) {
        if (error instanceof ComposeTextError) {
            return error;
        }

        throw error;
    }
}

/** The mistakes in types, then the schema's errors about other places. */
function readingErrors(reading: ModelReading): Finding[] {
    const problems = reading.problems.map(problemFinding);
    const others = schemaFindings(reading.plain).filter((finding) => !problems.some((problem) => overlaps(problem.path, finding.path)));
    return [...problems, ...others];
}

function problemFinding(problem: ShapeProblem): Finding {
    const [top, service, field] = problem.path;
    const inService = top === 'services' && typeof service === 'string';
    return {
        path: formatPath(problem.path),
        level: 'error',
        message: describeProblem(problem),
        ...(inService ? { service } : {}),
        ...(inService && field !== undefined ? { field: String(field) } : {}),
        fix: SCHEMA_FIX,
    };
}

function overlaps(path: string, other: string): boolean {
    return within(path, other) || within(other, path);
}

function within(path: string, parent: string): boolean {
    return path === parent || path.startsWith(`${parent}.`) || path.startsWith(`${parent}[`);
}

export function hasUnacceptedRisks(findings: Finding[]): boolean {
    return findings.some((finding) => finding.level === 'risk');
}
