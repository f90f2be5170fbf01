import type { Lifecycle } from '@hapi/hapi';

import { prepareMarkup, type RenderRequest, renderRawMarkdown } from '../../domain/markup/render.ts';
import { mentions } from '../../domain/markup/mention-service.ts';

interface MarkupPayload {
    Text?: string;
    Mode?: string;
    Context?: string;
    Wiki?: boolean;
    FilePath?: string;
}

/** Gitea answers render failures in plain text with a trailing newline, not as JSON. */
const renderAnswer: Lifecycle.Method = async (request, h) => {
    const payload = request.payload as MarkupPayload;
    const markup: RenderRequest = {
        text: payload.Text ?? '',
        mode: payload.Mode,
        context: payload.Context,
        filePath: payload.FilePath,
        wiki: payload.Wiki,
    };
    const prepared = prepareMarkup(markup, request.server.app.config.publicUrl);
    if (!prepared.ok) {
        return h.response(`${prepared.message}\n`).type('text/plain; charset=utf-8').code(422);
    }

    const mentionable = await mentions(request.server).mentionable(prepared.markup.mentionNames);
    return h.response(prepared.markup.render(mentionable)).type('text/html; charset=utf-8');
};

export const renderMarkdown = renderAnswer;

export const renderMarkup = renderAnswer;

export const renderMarkdownRaw: Lifecycle.Method = (request, h) =>
    h.response(renderRawMarkdown(request.payload as string)).type('text/html; charset=utf-8');
