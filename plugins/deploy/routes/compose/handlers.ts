import type { Lifecycle } from '@hapi/hapi';

import { forField, ValidationError } from '../../../../lib/errors.ts';
import { lintCompose, lintContextFor, parseCompose, renderCompose, validateCompose } from '../../domain/compose/compose-model.ts';
import { modelFromJson } from '../../domain/compose/compose-read.ts';
import type { ComposeSpec } from '../../domain/compose/compose-types.ts';

interface ComposeInput {
    text?: string;
    spec?: unknown;
    secrets?: Record<string, string>;
}

function specFrom({ text, spec }: ComposeInput): ComposeSpec {
    if (text !== undefined && spec !== undefined) {
        throw new ValidationError('text, spec: give one of them, not both');
    }

    if (text !== undefined) {
        return forField('text', () => parseCompose(text));
    }

    if (spec !== undefined) {
        return forField('spec', () => modelFromJson(spec));
    }

    throw new ValidationError('text: text or spec is required');
}

export const parseComposeText: Lifecycle.Method = (request) => {
    const { text } = request.payload as { text: string };
    return { spec: forField('text', () => parseCompose(text)) };
};

export const renderComposeSpec: Lifecycle.Method = (request) => {
    const { spec } = request.payload as { spec: unknown };
    return { text: renderCompose(forField('spec', () => modelFromJson(spec))) };
};

export const validateComposeFile: Lifecycle.Method = async (request) => {
    const input = request.payload as ComposeInput;
    const spec = specFrom(input);
    const secrets = input.secrets ?? {};
    const errors = await validateCompose(spec, { secrets });
    return { ok: errors.length === 0, errors, lint: lintCompose(spec, lintContextFor(request.server.app.config, { values: secrets })) };
};
