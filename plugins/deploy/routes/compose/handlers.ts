import type { Lifecycle, Request } from '@hapi/hapi';

import { forField, ValidationError } from '../../../../lib/errors.ts';
import { apps } from '../../domain/apps/app-service.ts';
import { composeCheckOptions } from '../../domain/apps/preview.ts';
import {
    checkComposeFile,
    type ComposeFile,
    type FileCheckOptions,
    lintContextFor,
    parseCompose,
    renderCompose,
} from '../../domain/compose/compose-model.ts';
import { modelFromJson } from '../../domain/compose/compose-read.ts';

interface ComposeInput {
    text?: string;
    spec?: unknown;
    secrets?: Record<string, string>;
    app?: string;
}

function fileFrom({ text, spec }: ComposeInput): ComposeFile {
    if (text !== undefined && spec !== undefined) {
        throw new ValidationError('text, spec: give one of them, not both');
    }

    if (text !== undefined) {
        return { text };
    }

    if (spec !== undefined) {
        return { spec };
    }

    throw new ValidationError('text: text or spec is required');
}

/** Without an app, the file is judged on its own: the given secrets, a folder standing for the app's, no site. */
async function checkOptions(request: Request, { app, secrets }: ComposeInput): Promise<FileCheckOptions> {
    if (app !== undefined) {
        return await composeCheckOptions(request.server, await apps(request.server).require(app), secrets);
    }

    return { secrets: secrets ?? {}, lint: lintContextFor(request.server.app.config, { values: secrets ?? {} }) };
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
    const file = fileFrom(input);
    return await checkComposeFile(file, await checkOptions(request, input));
};
