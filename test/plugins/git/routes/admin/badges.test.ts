import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ConflictError, ValidationError } from '../../../../../lib/errors.ts';
import { badges } from '../../../../../plugins/git/domain/identity/badge-service.ts';
import { users } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SWAGGER_URL = 'http://127.0.0.1:3000/api/swagger';

interface ApiBadge {
    id: number;
    slug: string;
    description: string;
    image_url: string;
}

describe('admin: user badges', () => {
    let context: TestServer;
    let admin: TestUser;
    let alice: TestUser;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { admin: true });
        alice = await createTestUser(context.server, { name: 'alice' });
        for (const slug of ['helper', 'reviewer', 'founder', 'translator']) {
            await badges(context.server).define({ slug, description: `The ${slug}`, image_url: `https://img.example.com/${slug}.png` });
        }
    });

    after(async () => {
        await context.cleanup();
    });

    const request = (method: 'GET' | 'POST' | 'DELETE', username: string, payload?: unknown, headers = admin.headers) =>
        context.server.inject({ method, url: `/api/v1/admin/users/${username}/badges`, headers, payload: payload as object | undefined });

    const slugsOf = async (username: string) => ((await request('GET', username)).result as ApiBadge[]).map((badge) => badge.slug);

    describe('defining badges (service only: Gitea has no API for it)', () => {
        it('defines a badge and refuses its slug twice or an empty slug', async () => {
            const badge = await badges(context.server).define({ slug: 'tester' });
            expect(badge).to.include({ slug: 'tester', description: '', image_url: '' });
            expect(badge.id).to.be.above(0);
            await expect(badges(context.server).define({ slug: 'tester' })).to.reject(ConflictError, 'badge already exists [slug: tester]');
            await expect(badges(context.server).define({ slug: '  ' })).to.reject(ValidationError);
            expect((await badges(context.server).bySlug('tester'))?.id).to.equal(badge.id);
        });

        it('refuses a slug, description or image URL longer than its column holds, and keeps one that fits', async () => {
            const define = (definition: { slug?: string; description?: string; image_url?: string }) =>
                badges(context.server).define({ slug: 'long', ...definition });
            await expect(define({ slug: 's'.repeat(192) })).to.reject(ValidationError, 'badge slug longer than 191 characters');
            await expect(define({ description: 'd'.repeat(256) })).to.reject(
                ValidationError,
                'badge description longer than 255 characters',
            );
            await expect(define({ image_url: `https://img.example.com/${'i'.repeat(2025)}` })).to.reject(
                ValidationError,
                'badge image URL longer than 2048 characters',
            );
            expect(await badges(context.server).bySlug('long')).to.be.undefined();
            const fits = await define({
                slug: 's'.repeat(191),
                description: 'é'.repeat(255),
                image_url: `https://img.example.com/${'i'.repeat(2024)}`,
            });
            expect(fits.description).to.equal('é'.repeat(255));
        });
    });

    describe('GET /admin/users/{username}/badges', () => {
        it('lists no badges as an empty array with X-Total-Count 0', async () => {
            await createTestUser(context.server, { name: 'nadia' });
            const response = await request('GET', 'nadia');
            expect(response.statusCode).to.equal(200);
            expect(response.result).to.equal([]);
            expect(response.headers['x-total-count']).to.equal('0');
            expect(swaggerErrors('adminListUserBadges', 200, response.result)).to.equal([]);
        });

        it("lists the user's badges with the Swagger document's field names, counted, without Link", async () => {
            const bob = await createTestUser(context.server, { name: 'bob' });
            await badges(context.server).give(bob.user, ['reviewer', 'helper']);
            const response = await request('GET', 'BOB');
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('adminListUserBadges', 200, response.result)).to.equal([]);
            const list = response.result as ApiBadge[];
            expect(list.map((badge) => Object.keys(badge).sort())).to.equal([
                ['description', 'id', 'image_url', 'slug'],
                ['description', 'id', 'image_url', 'slug'],
            ]);
            expect(list[0]).to.include({
                slug: 'reviewer',
                description: 'The reviewer',
                image_url: 'https://img.example.com/reviewer.png',
            });
            expect(list.map((badge) => badge.slug)).to.equal(['reviewer', 'helper']);
            expect(response.headers['x-total-count']).to.equal('2');
            expect(response.headers.link).to.not.exist();
        });

        it('answers 404 for an unknown user and 307 for a renamed one', async () => {
            const unknown = await request('GET', 'nobody');
            expect(unknown.statusCode).to.equal(404);
            expect(unknown.result).to.equal({ message: 'user redirect does not exist [name: nobody]', url: SWAGGER_URL });
            const dave = await createTestUser(context.server, { name: 'dave' });
            await users(context.server).rename(dave.user, 'david');
            const renamed = await request('GET', 'dave');
            expect(renamed.statusCode).to.equal(307);
            expect(renamed.headers.location).to.equal('/api/v1/admin/users/david/badges');
        });

        it('answers 403 to a caller who is not a site administrator', async () => {
            const response = await request('GET', 'alice', undefined, alice.headers);
            expect(response.statusCode).to.equal(403);
            expect(response.result).to.equal({ message: 'user should be the site admin', url: SWAGGER_URL });
        });
    });

    describe('POST /admin/users/{username}/badges', () => {
        it('gives badges with 204', async () => {
            await createTestUser(context.server, { name: 'gina' });
            const response = await request('POST', 'gina', { badge_slugs: ['helper', 'founder'] });
            expect(response.statusCode).to.equal(204);
            expect(response.payload).to.equal('');
            expect(await slugsOf('gina')).to.equal(['helper', 'founder']);
        });

        it('gives a badge named twice in one request once', async () => {
            const carol = await createTestUser(context.server, { name: 'carol' });
            expect((await request('POST', 'carol', { badge_slugs: ['helper', 'helper'] })).statusCode).to.equal(204);
            expect(await badges(context.server).ofUser(carol.user)).to.have.length(1);
        });

        it('refuses an empty list or an empty body with 422 [BadgeSlugs]: Required, no body at all with [] Empty Content-Type', async () => {
            for (const payload of [{ badge_slugs: [] }, {}]) {
                const response = await request('POST', 'alice', payload);
                expect(response.statusCode).to.equal(422);
                expect(response.result).to.equal({ message: '[BadgeSlugs]: Required', url: SWAGGER_URL });
            }

            // Gitea's binder wants a Content-Type on every POST, which a request without a body does not have.
            const bare = await request('POST', 'alice', undefined);
            expect(bare.statusCode).to.equal(422);
            expect(bare.result).to.equal({ message: '[]: Empty Content-Type', url: SWAGGER_URL });
        });

        it('answers 404 for an unknown slug and gives none of the others', async () => {
            await createTestUser(context.server, { name: 'otto' });
            const response = await request('POST', 'otto', { badge_slugs: ['translator', 'nope'] });
            expect(response.statusCode).to.equal(404);
            expect(response.result).to.equal({ message: 'badge does not exist [slug: nope]', url: SWAGGER_URL });
            expect(await slugsOf('otto')).to.equal([]);
        });

        it('answers 409 for a badge the user already has, and gives none of the others', async () => {
            const ivy = await createTestUser(context.server, { name: 'ivy' });
            await badges(context.server).give(ivy.user, ['helper', 'founder']);
            const response = await request('POST', 'ivy', { badge_slugs: ['translator', 'helper'] });
            expect(response.statusCode).to.equal(409);
            expect((response.result as { message: string }).message).to.equal(
                `user already has this badge [slug: helper, uid: ${ivy.user.id}]`,
            );
            expect(await slugsOf('ivy')).to.equal(['helper', 'founder']);
        });

        it('refuses badge_slugs that is not a list of strings with 422', async () => {
            const response = await request('POST', 'alice', { badge_slugs: 'helper,founder' });
            expect(response.statusCode).to.equal(422);
        });

        it('answers 404 for an unknown user and 403 to a caller who is not a site administrator', async () => {
            expect((await request('POST', 'nobody', { badge_slugs: ['helper'] })).statusCode).to.equal(404);
            const refused = await request('POST', 'alice', { badge_slugs: ['translator'] }, alice.headers);
            expect(refused.statusCode).to.equal(403);
            expect(refused.result).to.equal({ message: 'user should be the site admin', url: SWAGGER_URL });
        });
    });

    describe('DELETE /admin/users/{username}/badges', () => {
        it('takes badges with 204, ignoring slugs the user lacks or that name no badge', async () => {
            const erin = await createTestUser(context.server, { name: 'erin' });
            await badges(context.server).give(erin.user, ['helper', 'reviewer', 'founder']);
            const response = await request('DELETE', 'erin', { badge_slugs: ['reviewer', 'translator', 'nope'] });
            expect(response.statusCode).to.equal(204);
            expect(await slugsOf('erin')).to.equal(['helper', 'founder']);
        });

        it('refuses an empty list with 422', async () => {
            const response = await request('DELETE', 'alice', { badge_slugs: [] });
            expect(response.statusCode).to.equal(422);
            expect(response.result).to.equal({ message: '[BadgeSlugs]: Required', url: SWAGGER_URL });
        });

        it('answers 404 for an unknown user and 403 to a caller who is not a site administrator', async () => {
            const hank = await createTestUser(context.server, { name: 'hank' });
            await badges(context.server).give(hank.user, ['helper']);
            expect((await request('DELETE', 'nobody', { badge_slugs: ['helper'] })).statusCode).to.equal(404);
            expect((await request('DELETE', 'hank', { badge_slugs: ['helper'] }, alice.headers)).statusCode).to.equal(403);
            expect(await slugsOf('hank')).to.equal(['helper']);
        });
    });

    it("removes a user's badges with the user, and a badge's awards with the badge", async () => {
        const frank = await createTestUser(context.server, { name: 'frank' });
        await badges(context.server).give(frank.user, ['helper']);
        await users(context.server).delete(frank.user, admin.user, false);
        expect(await context.server.app.knex('user_badges').where({ user_id: frank.user.id })).to.equal([]);
        const gone = await badges(context.server).define({ slug: 'temporary' });
        await badges(context.server).give(alice.user, ['temporary']);
        await context.server.app.knex('badges').where({ id: gone.id }).delete();
        expect(await slugsOf('alice')).to.not.include('temporary');
    });

    it('works through the gitea-js client', async () => {
        await context.server.start();
        try {
            const api = giteaClient(context.server, admin);
            await createTestUser(context.server, { name: 'grace' });
            const added = await api.admin.adminAddUserBadges('grace', { badge_slugs: ['helper', 'translator'] });
            expect(added.status).to.equal(204);
            const listed = await api.admin.adminListUserBadges('grace');
            expect(listed.status).to.equal(200);
            expect(swaggerErrors('adminListUserBadges', 200, listed.data)).to.equal([]);
            expect(listed.data.map((badge) => badge.slug)).to.equal(['helper', 'translator']);
            expect(listed.headers.get('x-total-count')).to.equal('2');
            const removed = await api.admin.adminDeleteUserBadges('grace', { badge_slugs: ['helper'] });
            expect(removed.status).to.equal(204);
            expect((await api.admin.adminListUserBadges('grace')).data.map((badge) => badge.slug)).to.equal(['translator']);
        } finally {
            await context.server.stop();
        }
    });
});
