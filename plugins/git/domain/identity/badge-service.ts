import { ConflictError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import type { UserRow } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

export interface BadgeRow {
    id: number;
    slug: string;
    description: string;
    image_url: string;
}

export interface BadgeDefinition {
    slug: string;
    description?: string;
    image_url?: string;
}

function toBadgeRow(raw: Record<string, unknown>): BadgeRow {
    return { id: Number(raw.id), slug: String(raw.slug), description: String(raw.description), image_url: String(raw.image_url) };
}

/** What the badges table's columns hold. */
const MAX_SLUG_LENGTH = 191;
const MAX_DESCRIPTION_LENGTH = 255;
const MAX_IMAGE_URL_LENGTH = 2048;

/**
 * Badges are defined here (Gitea has no API for that: its web admin and database seed them, our CLI will)
 * and given to or taken from users through the admin API.
 */
export class BadgeService extends Service {
    async define(definition: BadgeDefinition): Promise<BadgeRow> {
        const slug = definition.slug.trim();
        if (slug === '') {
            throw new ValidationError(`invalid badge slug [slug: ${definition.slug}]`);
        }

        if (slug.length > MAX_SLUG_LENGTH) {
            throw new ValidationError(`badge slug longer than ${MAX_SLUG_LENGTH} characters`);
        }

        if ((definition.description ?? '').length > MAX_DESCRIPTION_LENGTH) {
            throw new ValidationError(`badge description longer than ${MAX_DESCRIPTION_LENGTH} characters`);
        }

        if ((definition.image_url ?? '').length > MAX_IMAGE_URL_LENGTH) {
            throw new ValidationError(`badge image URL longer than ${MAX_IMAGE_URL_LENGTH} characters`);
        }

        return await this.knex.transaction(async (trx) => {
            if (await trx('badges').where({ slug }).first('id')) {
                throw new ConflictError(`badge already exists [slug: ${slug}]`);
            }

            const [id] = await trx('badges').insert({
                slug,
                description: definition.description ?? '',
                image_url: definition.image_url ?? '',
            });
            return toBadgeRow(await trx('badges').where({ id }).first());
        });
    }

    async bySlug(slug: string): Promise<BadgeRow | undefined> {
        const raw = await this.knex('badges').where({ slug }).first();
        return raw ? toBadgeRow(raw) : undefined;
    }

    /** The user's badges, in the order they were given. */
    async ofUser(user: UserRow): Promise<BadgeRow[]> {
        const rows = await this.knex('badges')
            .join('user_badges', 'user_badges.badge_id', 'badges.id')
            .where('user_badges.user_id', user.id)
            .orderBy('user_badges.id', 'asc')
            .select('badges.*');
        return rows.map(toBadgeRow);
    }

    /**
     * Gives every badge or none. An unknown slug is a 404 and a badge the user already has a 409
     * (Gitea answers both with a 500): the request itself is well-formed, so it is not a 422, and
     * the conflict is with the user's current badges (a 409, as Gitea answers an existing repository name).
     */
    async give(user: UserRow, slugs: string[]): Promise<void> {
        await this.knex.transaction(async (trx) => {
            for (const slug of new Set(slugs)) {
                const badge = await trx('badges').where({ slug }).first('id');
                if (!badge) {
                    throw new NotFoundError(`badge does not exist [slug: ${slug}]`);
                }

                if (await trx('user_badges').where({ user_id: user.id, badge_id: badge.id }).first('id')) {
                    throw new ConflictError(`user already has this badge [slug: ${slug}, uid: ${user.id}]`);
                }

                await trx('user_badges').insert({ user_id: user.id, badge_id: badge.id });
            }
        });
    }

    /** Takes the named badges from the user; slugs that name no badge, or one the user lacks, are ignored. */
    async take(user: UserRow, slugs: string[]): Promise<void> {
        if (slugs.length === 0) {
            return;
        }

        await this.knex('user_badges')
            .where({ user_id: user.id })
            .whereIn('badge_id', this.knex('badges').whereIn('slug', slugs).select('id'))
            .delete();
    }
}

export const badges = defineService<BadgeService>('badges', (owner) => new BadgeService(owner));
