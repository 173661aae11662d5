print("logbook")
