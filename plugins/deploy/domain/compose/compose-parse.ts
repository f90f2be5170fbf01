/** Compose YAML to the model, on its own: a deploy's worker needs this without the validators' weight (ajv, dockerode). */
import { modelFromPlain } from './compose-read.ts';
import type { ComposeSpec } from './compose-types.ts';
import { readComposeText } from './compose-yaml.ts';

/** Parses compose YAML into the model; a ValidationError (422) names the line or the path of what is wrong. */
export function parseCompose(text: string): ComposeSpec {
    const { value, lineOf } = readComposeText(text);
    return modelFromPlain(value, lineOf);
}
