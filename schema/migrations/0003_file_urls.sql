ALTER TABLE `derived_files` ADD `url_token` text;--> statement-breakpoint
ALTER TABLE `derived_files` ADD `url_expires_at` integer;--> statement-breakpoint
ALTER TABLE `files` ADD `url_token` text;--> statement-breakpoint
ALTER TABLE `files` ADD `url_expires_at` integer;