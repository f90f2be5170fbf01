import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { parsePaging, setPagingHeaders } from '../../lib/paging.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const ROOT = 'http://127.0.0.1:3000/';

/** A list route of `total` numbered items, paged as Gitea pages. */
function listServer(total: number) {
    const server = Hapi.server();
    server.route({
        method: 'GET',
        path: '/api/v1/items',
        handler(request, h) {
            const paging = parsePaging(request.query);
            const items = Array.from({ length: total }, (_, index) => index + 1).slice(paging.offset, paging.offset + paging.limit);
            return setPagingHeaders(request, h.response(items), ROOT, { total, paging });
        },
    });
    return server;
}

describe('paging as Gitea pages', () => {
    it('defaults to page 1 of 30 and caps limit at 50', () => {
        expect(parsePaging({})).to.equal({ page: 1, limit: 30, offset: 0 });
        expect(parsePaging({ page: '3', limit: '10' })).to.equal({ page: 3, limit: 10, offset: 20 });
        expect(parsePaging({ limit: '500' }).limit).to.equal(50);
    });

    it('treats a bad page as 1 and a bad or non-positive limit as 30', () => {
        expect(parsePaging({ page: 'abc', limit: 'x' })).to.equal({ page: 1, limit: 30, offset: 0 });
        expect(parsePaging({ page: '-4', limit: '0' })).to.equal({ page: 1, limit: 30, offset: 0 });
        expect(parsePaging({ limit: '-1' }).limit).to.equal(30);
    });

    it('sets X-Total-Count and next/last links on the first page, keys sorted', async () => {
        const response = await listServer(95).inject('/api/v1/items?limit=10&q=a%20b');
        expect(response.result).to.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        expect(response.headers['x-total-count']).to.equal('95');
        expect(response.headers.link).to.equal(
            `<${ROOT}api/v1/items?limit=10&page=2&q=a+b>; rel="next",<${ROOT}api/v1/items?limit=10&page=10&q=a+b>; rel="last"`,
        );
        expect(response.headers['access-control-expose-headers']).to.equal('X-Total-Count, Link');
    });

    it('sets all four relations in the middle, and first/prev on the last page', async () => {
        const middle = await listServer(95).inject('/api/v1/items?limit=10&page=5');
        expect(middle.headers.link).to.equal(
            [
                `<${ROOT}api/v1/items?limit=10&page=6>; rel="next"`,
                `<${ROOT}api/v1/items?limit=10&page=10>; rel="last"`,
                `<${ROOT}api/v1/items?limit=10&page=1>; rel="first"`,
                `<${ROOT}api/v1/items?limit=10&page=4>; rel="prev"`,
            ].join(','),
        );
        const last = await listServer(95).inject('/api/v1/items?limit=10&page=10');
        expect(last.result).to.equal([91, 92, 93, 94, 95]);
        expect(last.headers.link).to.equal(
            `<${ROOT}api/v1/items?limit=10&page=1>; rel="first",<${ROOT}api/v1/items?limit=10&page=9>; rel="prev"`,
        );
    });

    it('answers an empty page past the end with the same total, links clamped to the last page', async () => {
        const response = await listServer(5).inject('/api/v1/items?limit=2&page=9');
        expect(response.result).to.equal([]);
        expect(response.headers['x-total-count']).to.equal('5');
        expect(response.headers.link).to.equal(
            `<${ROOT}api/v1/items?limit=2&page=1>; rel="first",<${ROOT}api/v1/items?limit=2&page=2>; rel="prev"`,
        );
    });

    it('sends no Link when everything fits on one page', async () => {
        const response = await listServer(3).inject('/api/v1/items');
        expect(response.headers['x-total-count']).to.equal('3');
        expect(response.headers.link).to.not.exist();
        expect(response.headers['access-control-expose-headers']).to.equal('X-Total-Count');
    });
});
