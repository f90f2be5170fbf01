import type { Lifecycle, Request } from '@hapi/hapi';

import { ValidationError } from '../../../../lib/errors.ts';
import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { badges, type BadgeRow } from '../../domain/identity/badge-service.ts';
import { USER_TYPE, type UserRow, users } from '../../domain/identity/user-service.ts';

interface BadgesPayload {
    badge_slugs?: string[];
}

export interface ApiBadge {
    id: number;
    slug: string;
    description: string;
    image_url: string;
}

/** The Swagger document's names; Gitea itself leaks its model's `ID`, `Slug`, `Description`, `ImageURL`. */
function toApiBadge(badge: BadgeRow): ApiBadge {
    return { id: badge.id, slug: badge.slug, description: badge.description, image_url: badge.image_url };
}

async function pathUser(request: Request): Promise<UserRow> {
    return await users(request.server).resolve(request.params.username as string, USER_TYPE.individual);
}

/** Gitea binds `badge_slugs` as Required, which an empty list (or no body) fails. */
function badgeSlugs(request: Request): string[] {
    const slugs = (request.payload as BadgesPayload | null)?.badge_slugs ?? [];
    if (slugs.length === 0) {
        throw new ValidationError('[BadgeSlugs]: Required');
    }

    return slugs;
}

export const adminListUserBadges: Lifecycle.Method = async (request, h) => {
    const list = await badges(request.server).ofUser(await pathUser(request));
    return setPagingHeaders(request, h.response(list.map(toApiBadge)), request.server.app.config.publicUrl, {
        total: list.length,
        paging: parsePaging({}),
        link: false,
    });
};

export const adminAddUserBadges: Lifecycle.Method = async (request, h) => {
    const user = await pathUser(request);
    await badges(request.server).give(user, badgeSlugs(request));
    return h.response().code(204);
};

export const adminDeleteUserBadges: Lifecycle.Method = async (request, h) => {
    const user = await pathUser(request);
    await badges(request.server).take(user, badgeSlugs(request));
    return h.response().code(204);
};
