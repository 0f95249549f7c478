"""Reading lessons from disk: lesson.yaml, step files with front matter, widget and drill blocks."""
