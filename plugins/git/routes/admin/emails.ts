import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { emails } from '../../domain/identity/email-service.ts';

async function emailList(request: Request, h: ResponseToolkit, text: string) {
    const paging = parsePaging(request.query);
    const { rows, total } = await emails(request.server).search(text, paging);
    return setPagingHeaders(request, h.response(rows), request.server.app.config.publicUrl, { total, paging });
}

/** Gitea's list ignores `q`: only the search reads it. */
export const adminGetAllEmails: Lifecycle.Method = async (request, h) => await emailList(request, h, '');

export const adminSearchEmails: Lifecycle.Method = async (request, h) => {
    const q = (request.query as { q?: string }).q ?? '';
    return await emailList(request, h, q.trim());
};
