import type { Lifecycle, Request } from '@hapi/hapi';

import { ValidationError } from '../../../../lib/errors.ts';
import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { pathUser } from '../shared/access.ts';
import { badges, type BadgeRow } from '../../domain/identity/badge-service.ts';

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

/** Gitea binds `badge_slugs` as Required, which an empty list (or no body) fails. */
function badgeSlugs(request: Request): string[] {
    const slugs = (request.payload as BadgesPayload | null)?.badge_slugs ?? [];
    if (slugs.length === 0) {
        throw new ValidationError('[BadgeSlugs]: Required');
    }

    return slugs;
}

export const adminListUserBadges: Lifecycle.Method = async (request, h) => {
    const list = await badges(request.server).ofUser(pathUser(request));
    return setPagingHeaders(request, h.response(list.map(toApiBadge)), request.server.app.config.publicUrl, {
        total: list.length,
        paging: parsePaging({}),
        link: false,
    });
};

export const adminAddUserBadges: Lifecycle.Method = async (request, h) => {
    await badges(request.server).give(pathUser(request), badgeSlugs(request));
    return h.response().code(204);
};

export const adminDeleteUserBadges: Lifecycle.Method = async (request, h) => {
    await badges(request.server).take(pathUser(request), badgeSlugs(request));
    return h.response().code(204);
};
