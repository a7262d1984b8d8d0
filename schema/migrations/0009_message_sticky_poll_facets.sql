CREATE TABLE `poll_facets` (
	`poll_id` integer NOT NULL,
	`facet` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY(`facet`, `value`, `poll_id`)
);
--> statement-breakpoint
CREATE INDEX `poll_facets_poll` ON `poll_facets` (`poll_id`);--> statement-breakpoint
ALTER TABLE `messages` ADD `deleted_by` integer;--> statement-breakpoint
CREATE INDEX `messages_sticky` ON `messages` (`channel_id`,`is_sticky`,`id`);