/**
 * The compose model: a typed view of a docker-compose file covering what self-hosted apps use, parsed from
 * and rendered to YAML without loss. What the model does not cover is kept verbatim in `extra`. Its types are
 * in compose-types.ts; this module holds the entry points, which the model's modules do not import.
 */
import type { Finding } from '../findings/finding.ts';
import { checkConfiguration } from './compose-checks.ts';
import type { LintContext } from './compose-host-paths.ts';
import { lintSpec } from './compose-lint.ts';
import { plainFromModel } from './compose-read.ts';
import { schemaFindings } from './compose-schema.ts';
import type { ComposeSpec, ValidateOptions } from './compose-types.ts';
import { writeComposeText } from './compose-yaml.ts';

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

export function hasUnacceptedRisks(findings: Finding[]): boolean {
    return findings.some((finding) => finding.level === 'risk');
}
